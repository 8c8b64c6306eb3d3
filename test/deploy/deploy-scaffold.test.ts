// deploy/Dockerfile builds a `fastbase init` project with only what the project folder holds
// (decision D100). Docker's registry is out of reach here, so the test carries out the Dockerfile's
// own instructions, read from the file, on a clean folder: its COPY lines (and .dockerignore), its
// `npm ci` with an empty npm cache, its ENV, its CMD, then its HEALTHCHECK. The OS packages of its
// apt-get line are the test machine's own. Nothing copied may name this checkout, so fastbase can
// only come from the vendored tarball. The started server serves (its shutdown grace:
// test/scripts/start-grace.test.ts). Slow: npm downloads every dependency and builds better-sqlite3.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { cleanEnv, fastbase, root, skip, startServer } from '../cli-run.js'
import { freshDir } from '../helper.js'

interface Instruction { op: string, args: string }

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions (text: string): Instruction[] {
  return text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).map((line) => {
    const [op, ...rest] = line.split(/\s+/)
    return { op: op.toUpperCase(), args: rest.join(' ') }
  })
}

/** Every file under `dir` (node_modules left out), as paths relative to it. */
function filesUnder (dir: string, at = dir): string[] {
  return readdirSync(at).flatMap((name) => {
    const path = join(at, name)
    if (name === 'node_modules') return []
    return statSync(path).isDirectory() ? filesUnder(dir, path) : [relative(dir, path)]
  })
}

/** `KEY=value` lines of an env file. */
function envFile (text: string): Record<string, string> {
  return Object.fromEntries(text.split('\n').filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
}

async function sh (command: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null, output: string }> {
  const child = spawn('sh', ['-c', command], { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const [code] = await once(child, 'close') as [number | null]
  return { code, output }
}

t.test('a scaffold builds as deploy/Dockerfile says, from its own folder alone, and starts', { skip }, async (t) => {
  const parent = freshDir(t, 'deploy-')
  const project = join(parent, 'my-app')
  const init = await fastbase(['init', 'my-app'], { cwd: parent })
  t.equal(init.code, 0, init.stderr)
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string
  t.equal(pkg.dependencies.fastbase, `file:vendor/fastbase-${version}.tgz`, 'the scaffold depends on the tarball it carries')
  t.ok(existsSync(join(project, 'vendor', `fastbase-${version}.tgz`)), 'which init packed into vendor/')
  t.same(pkg.overrides, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).overrides, 'fastbase\'s overrides, which a dependency cannot pass on')

  // On the user's machine: `npm install` writes the lock file (only the lock is needed here).
  const lock = await promisify(execFile)('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: project, env: cleanEnv() })
  t.notMatch(lock.stderr, /EBADENGINE/, 'no engine warning')

  // The image's build, by the Dockerfile's instructions.
  const steps = instructions(readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8'))
  const ignored = new Set(readFileSync(join(root, 'deploy', 'dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== ''))
  const image = freshDir(t, 'image-')
  const emptyCache = freshDir(t, 'npm-cache-')
  const dataDir = freshDir(t, 'data-')
  let workdir = image
  const env: Record<string, string> = {}
  let cmd: string[] | undefined
  let healthcheck: string | undefined
  for (const { op, args } of steps) {
    if (op === 'FROM') t.match(args, /^node:20\b/, 'the image is Node 20, as this test runs')
    else if (op === 'WORKDIR') mkdirSync(workdir = join(image, args), { recursive: true })
    else if (op === 'COPY') {
      const paths = args.split(/\s+/)
      const target = join(workdir, paths.at(-1)!)
      for (const source of paths.slice(0, -1)) {
        if (source === '.') cpSync(project, target, { recursive: true, filter: (path) => !ignored.has(relative(project, path).split('/')[0]) })
        else cpSync(join(project, source), source.endsWith('/') ? join(target) : join(target, source), { recursive: true })
      }
      if (paths[0] !== '.') {
        const named = filesUnder(workdir).filter((file) => readFileSync(join(workdir, file)).includes(root))
        t.same(named, [], `after COPY ${args}: no file names the checkout (${root})`)
      }
    } else if (op === 'RUN' && args.startsWith('npm ')) {
      const run = await sh(args, workdir, { ...env, npm_config_cache: emptyCache })
      t.equal(run.code, 0, `RUN ${args} with an empty npm cache:\n${run.output}`)
      t.notMatch(run.output, /EBADENGINE/, 'no engine warning')
    } else if (op === 'RUN' && /^(apt-get |mkdir -p \/data)/.test(args)) {
      // OS packages (the test machine's own) and the volume's folder (a temporary one here).
    } else if (op === 'ENV') {
      for (const [, name, value] of args.matchAll(/([A-Z_]+)=(\S+)/g)) env[name] = value
    } else if (op === 'CMD') cmd = JSON.parse(args)
    else if (op === 'HEALTHCHECK') healthcheck = args.replace(/^.*?\bCMD\s+/, '')
    else if (!['USER', 'EXPOSE', 'VOLUME'].includes(op)) t.fail(`an instruction this test does not carry out: ${op} ${args}`)
  }
  t.notOk(lstatSync(join(workdir, 'node_modules', 'fastbase')).isSymbolicLink(), 'fastbase is installed, not linked')
  t.equal(JSON.parse(readFileSync(join(workdir, 'node_modules', 'fastbase', 'package.json'), 'utf8')).version, version)
  t.same(cmd, ['npm', 'start'])

  // docker run --env-file .env: the image's ENV, the project's secrets, a local folder for /data.
  const { PORT: _port, FASTIFY_ADDRESS: _address, ...imageEnv } = env
  t.equal(imageEnv.NODE_ENV, 'production')
  const runEnv = { ...imageEnv, ...envFile(readFileSync(join(project, '.env'), 'utf8')), FASTBASE_DATA_DIR: dataDir }
  const server = await startServer(t, workdir, cmd!, runEnv)
  const ready = await fetch(`${server.url}/api/v1/health/ready`)
  t.equal(ready.status, 200, `the image's command serves:\n${server.output()}`)
  const signUp = await fetch(`${server.url}/api/v1/table/users/auth/sign-up`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'deployed', email: 'deployed@example.com', password: 'deployed password', name: 'D' }) })
  t.equal(signUp.status, 200)
  t.ok(existsSync(join(dataDir, 'fastbase.sqlite')), 'the database lives in the volume')
  const port = new URL(server.url).port
  t.equal((await sh(healthcheck!, workdir, { PORT: port })).code, 0, 'the HEALTHCHECK passes')

  await server.stop()
})
