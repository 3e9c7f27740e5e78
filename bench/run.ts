import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// Usage: npm run bench -- <name> [args]. Every bench/<name>.ts exports run(args); bench/lib holds helpers.
const benchDir = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(benchDir)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && file !== 'run.ts')
  .map((file) => file.slice(0, -'.ts'.length))
  .sort()

const [name, ...args] = process.argv.slice(2)
if (name === undefined || !available.includes(name)) {
  if (name !== undefined) console.error(`Unknown benchmark "${name}".`)
  console.error(
    `Usage: npm run bench -- <name> [args]\nAvailable benchmarks: ${available.join(', ') || '(none)'}`,
  )
  process.exit(1)
}

const benchmark = (await import(pathToFileURL(join(benchDir, `${name}.ts`)).href)) as {
  run?: (args: string[]) => Promise<void>
}
if (typeof benchmark.run !== 'function') {
  console.error(`bench/${name}.ts does not export run(args).`)
  process.exit(1)
}
await benchmark.run(args)
