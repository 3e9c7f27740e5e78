import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers and processes on one SQLite file each; two cores are shared.
    maxWorkers: 2,
  },
})
