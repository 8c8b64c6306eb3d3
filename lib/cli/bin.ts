#!/usr/bin/env node
// The `fastbase` command (package.json `bin`). Everything lives in lib/cli/main.ts.
import { main } from './main.js'

// A reader that went away (`fastbase migrate | head -3`) drops the rest of the output; the command
// still finishes what it does and exits with its own code, never with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
})

process.exitCode = await main(process.argv.slice(2))
