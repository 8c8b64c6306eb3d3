// `npm start`: fastify-cli's `fastify start` with the same arguments, options and FASTIFY_*
// variables, except that
// - `.env` of the working directory is read first, by the rule the CLI shares
//   (lib/config/locations.ts): variables already set win, and PORT or FASTIFY_ADDRESS may come from it;
// - in-flight requests get 10 s to finish on shutdown, not fastify-cli's 500 ms, for fastbase's own
//   `npm start` and a scaffold's alike (FASTIFY_CLOSE_GRACE_DELAY, in milliseconds, or -g changes it);
// - a start that fails (a config with problems, an unreachable database, a migration the database
//   refuses) ends with one clean message on stderr and exit code 1, not Node's uncaught-exception
//   dump. Set FASTBASE_DEBUG=1 for the stack.
// - V8's optimizing compiler, off while it starts (`--no-opt`), is turned on once it listens (decision
//   D137);
// - V8's young generation, grown by the start (and later by bursts of requests), is given back
//   whenever the server has been quiet for some seconds (decision D144).
// package.json's `start` runs it with `--heap-growing-percent=50 --no-opt` (decisions D80, D137): V8's
// heap sizes are fixed when Node starts, so they cannot be set from here.
import { runFastify } from 'fastify-cli/start.js'
import { withEnvFile } from '../dist/lib/config/locations.js'
import { optimizeFromNowOn } from '../dist/lib/cli/optimizer.js'
import { trimYoungGenerationWhenQuiet } from '../dist/lib/cli/young-generation.js'

try {
  const { env } = await withEnvFile(process.env, undefined)
  for (const [name, value] of Object.entries(env)) if (process.env[name] === undefined) process.env[name] = value
  process.env.FASTIFY_CLOSE_GRACE_DELAY ??= '10000'
  await runFastify(process.argv.slice(2))
  optimizeFromNowOn()
  trimYoungGenerationWhenQuiet()
} catch (error) {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`fastbase could not start: ${message}\n`)
  if (process.env.FASTBASE_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`)
  process.exit(1)
}
