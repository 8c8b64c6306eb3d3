// fastbase as its own server versus fastbase inside a host app.
//
// Its own server is `fastify start --options dist/app.js` (what `npm start` and a scaffold's `npm start`
// run): fastify-cli then creates the server with app.ts's `options` (trusted proxies, the log serializer
// that keeps query strings out of logs, request ids...) and passes the same object to the plugin as its
// options. The mark below rides along, so the plugin knows it is the server: only then may it serve
// the bundled example when no config is named or found. A host never passes it, so a host without a
// config gets a ConfigError, not a demo blog on public secrets.
//
// Without `--options`, fastify-cli creates a server with none of those options and says nothing. The
// plugin cannot see how its server was created, and fastify-cli consumes `process.argv`, but two things
// together say that fastbase is the app `fastify start` was given: the process is fastify-cli (or
// `npm start`'s scripts/start.mjs, which runs fastify-cli's start), and fastbase sits directly on the
// root instance as its first plugin, where fastify-cli puts the app (a host started by fastify-cli puts
// its own plugin there, and fastbase under it). That start is refused.
import { realpathSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { packageRoot } from '../lib/package.js'

/** The key of the mark in app.ts's server options (a symbol: no option a host writes can set it by accident). */
export const OWN_SERVER = Symbol('fastbase: started with its own server options')

/** True when the plugin's options are app.ts's server options (fastify-cli's `--options`). */
export function startedAsOwnServer (opts: object): boolean {
  return OWN_SERVER in opts && opts[OWN_SERVER] === true
}

/**
 * Refuses to run as the app of a fastify-cli start that did not apply fastbase's server options.
 * `host` is the instance fastbase is registered on.
 */
export function refuseStartWithoutServerOptions (host: FastifyInstance, opts: object): void {
  if (startedAsOwnServer(opts) || host.pluginName !== 'fastify -> fastbase' || !runsFastifyCli(process.argv[1])) return
  const refusal = (
    '`fastify start` without `--options` would run fastbase without its server options ' +
    '(FASTBASE_TRUST_PROXY ignored, so rate limits count per proxy, not per client; query strings in the logs). ' +
    `Start it with \`npm start\` or \`fastify start --options -l info ${appFileFrom(process.cwd())}\` ` +
    '(an app file that exports fastbase as its plugin must export fastbase\'s `options` too).'
  )
  // fastify-cli leaves a plugin's error to Node's uncaught-rejection dump (a stack, the source line):
  // this start is a command line's, so it ends as one: the message and exit code 1.
  process.stderr.write(`fastbase could not start: ${refusal}\n`)
  process.exit(1)
}

/**
 * fastbase's app file as the command is typed from `cwd`: `node_modules/fastbase/dist/app.js` in a
 * project that depends on fastbase, `dist/app.js` in fastbase's own checkout.
 */
export function appFileFrom (cwd: string): string {
  const installed = join(cwd, 'node_modules', 'fastbase')
  if (realPath(installed) === realPath(packageRoot)) return 'node_modules/fastbase/dist/app.js'
  return relative(cwd, join(packageRoot, 'dist', 'app.js')).split(sep).join('/')
}

/** True when `main` (the process's main script) is fastify-cli's or `npm start`'s. */
function runsFastifyCli (main: string | undefined): boolean {
  if (main === undefined) return false
  const file = realPath(main)
  return /[\\/]fastify-cli[\\/]/.test(file) || file === realPath(join(packageRoot, 'scripts', 'start.mjs'))
}

function realPath (path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
