#!/usr/bin/env node
// The `fastbase` command (package.json `bin`). Everything lives in lib/cli/main.ts.
import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2))
