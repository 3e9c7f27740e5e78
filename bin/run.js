#!/usr/bin/env node
// @oclif/core checks its own Node engine range with semver as it loads (about 30 ms and 48 files, every
// command); ours is declared in package.json, which npm checks at install.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
