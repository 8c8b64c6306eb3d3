// `npm start`: fastify-cli's `fastify start` with the same arguments, options and FASTIFY_*
// variables, except that a start that fails (a config with problems, an unreachable database, a
// migration the database refuses) ends with one clean message on stderr and exit code 1, not Node's
// uncaught-exception dump. Set FASTBASE_DEBUG=1 for the stack.
import { runFastify } from 'fastify-cli/start.js'

try {
  await runFastify(process.argv.slice(2))
} catch (error) {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`fastbase could not start: ${message}\n`)
  if (process.env.FASTBASE_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`)
  process.exit(1)
}
