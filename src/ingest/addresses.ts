import { BlockList, isIP } from 'node:net'

/** Addresses on the operator's side of the network: what a document from the internet may not send us to. */
const INTERNAL = new BlockList()
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  INTERNAL.addSubnet(address, prefix, 'ipv4')
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(address, prefix, 'ipv6')

/** Loopback, private, link-local (cloud metadata at 169.254.169.254), shared, reserved or multicast. */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped) return INTERNAL.check(mapped, 'ipv4')
  const family = isIP(address)
  if (family === 0) return true
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6')
}
