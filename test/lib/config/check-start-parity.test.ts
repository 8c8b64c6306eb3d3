// `fastbase check` runs every check a start runs (lib/config/startup-checks.ts): each config of
// test/fixtures/broken-configs/ gets the same verdict and the same problem lines from the spawned
// CLI (dist) and from a start (the plugin registered on Fastify), on each dialect. cases.json says
// what each config breaks, so a config that fails for another reason (on both sides alike) fails here.
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import fastbase, { options as serverOptions } from '../../../app.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { fastbase as fastbaseCli, skip } from '../../cli-run.js'
import { ConfigError } from '../../../lib/errors.js'
import type { DialectName } from '../../../lib/dialects/types.js'

// Two processes and a start per config and dialect: more than .taprc's time per file on a busy machine.
t.setTimeout(600_000)

const folder = join(import.meta.dirname, '..', '..', 'fixtures', 'broken-configs')

interface Case {
  /** A text every problem list of this config holds. */
  expect: string
  /** Environment of both the check and the start. */
  env?: Record<string, string>
  /** The dialect on which this config is fine (a refusal of the other dialect's schema). */
  okOn?: DialectName
}

const cases = JSON.parse(readFileSync(join(folder, 'cases.json'), 'utf8')) as Record<string, Case>

interface Verdict { ok: boolean, problems: string[], warnings: string[] }

async function checkVerdict (file: string, databaseUrl: string, env: Record<string, string>): Promise<Verdict> {
  // The config's own folder as working directory: no .env or fastbase.config.* of the checkout is read.
  const run = await fastbaseCli(['check', file], { cwd: dirname(file), env: { ...env, DATABASE_URL: databaseUrl } })
  if (run.code !== 0 && run.code !== 1) throw new Error(`fastbase check exited ${String(run.code)}: ${run.stderr}`)
  const lines = run.stderr.split('\n')
  const problems = lines.filter((line) => line.startsWith('  - ')).map((line) => line.slice(4))
  const warnings = lines.filter((line) => line.startsWith('warning: ')).map((line) => line.slice('warning: '.length))
  return { ok: run.code === 0, problems, warnings }
}

/** A start of `file` as the server does it, with the warnings it logs about the config. */
async function startVerdict (t: Test, file: string, databaseUrl: string, env: Record<string, string>): Promise<Verdict> {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done() } })
  const app = Fastify({ ...serverOptions, logger: { level: 'warn', stream } })
  t.teardown(() => app.close())
  const warnings = (): string[] => lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40 && String(l.msg).startsWith('fastbase config: ')).map((l) => String(l.msg).slice('fastbase config: '.length))
  try {
    await app.register(fastbase, { config: file, databaseUrl, env, dataDir: freshDir(t), adminServiceToken: adminToken })
    await app.ready()
    return { ok: true, problems: [], warnings: warnings() }
  } catch (error) {
    // Anything but a ConfigError (a crash, a database error) is a check `check` does not run.
    if (!(error instanceof ConfigError)) throw error
    return { ok: false, problems: error.problems, warnings: warnings() }
  }
}

t.test('check prints every warning a start logs, the same lines', { skip }, async (t) => {
  await forEachDialect(t, 'a config that starts, with warnings', async (t, dialect) => {
    const file = join(import.meta.dirname, '..', '..', 'fixtures', 'config-warnings', 'notes.json')
    const databaseUrl = sharedDatabase(t, dialect)
    const checked = await checkVerdict(file, databaseUrl, {})
    const started = await startVerdict(t, file, databaseUrl, {})
    t.same(checked, started, 'same verdict, same warnings')
    t.ok(started.ok)
    t.match(started.warnings, [
      'table "notes": createRule, updateRule, deleteRule not set: admins only for those operations',
      'table "tags" has no rules extension: only admins can use it',
      /^authCookie: secure: false keeps the cookie's name without the __Host- prefix/,
      /^email\.variables\.action_link does not change the links .* emailTemplates\.verification\.variables/
    ])
    t.equal(started.warnings.length, 4)
  })
})

t.test('the corpus covers every kind of start-up check', async (t) => {
  const files = readdirSync(folder).filter((f) => f.endsWith('.json') && f !== 'cases.json').map((f) => f.slice(0, -'.json'.length))
  t.same(files.sort(), Object.keys(cases).sort(), 'each config has its case, each case its config')
  t.ok(files.length >= 12)
})

for (const [name, c] of Object.entries(cases)) {
  t.test(name, { skip }, async (t) => {
    await forEachDialect(t, 'check and start agree', async (t, dialect) => {
      const file = join(folder, `${name}.json`)
      const env = c.env ?? {}
      const databaseUrl = sharedDatabase(t, dialect)
      const checked = await checkVerdict(file, databaseUrl, env)
      const started = await startVerdict(t, file, databaseUrl, env)
      t.same(checked, started, 'same verdict, same problem lines, same warnings')
      if (c.okOn === dialect) {
        t.ok(checked.ok, `fine on ${dialect}`)
      } else {
        t.notOk(checked.ok, 'refused')
        t.ok(checked.problems.some((p) => p.includes(c.expect)), `refused for what it breaks: ${c.expect}`)
      }
    })
  })
}
