// Writes oclif.manifest.json after a build (npm run build). Without a manifest oclif imports every command
// file to learn its flags before it runs one, which made each `svc` command load the whole appliance; with
// it, a command loads only its own file. @oclif/core's Plugin builds the manifest as the oclif CLI's
// `oclif manifest` does.
import { writeFileSync } from 'node:fs'
import { Plugin } from '@oclif/core'

const plugin = new Plugin({
  root: process.cwd(),
  type: 'core',
  ignoreManifest: true,
  errorOnManifestCreate: true,
})
await plugin.load()
writeFileSync('oclif.manifest.json', `${JSON.stringify(plugin.manifest)}\n`)
