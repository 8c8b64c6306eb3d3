// `fastbase check` runs every check a start runs (lib/config/startup-checks.ts): each config of
// test/fixtures/broken-configs/ gets the same verdict and the same problem lines from the spawned
// CLI (dist) and from a start (the plugin registered on Fastify), on each dialect. cases.json says
// what each config breaks, so a config that fails for another reason (on both sides alike) fails here.
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp, forEachDialect, sharedDatabase } from './helper.js'
import { fastbase, skip } from './cli-run.js'
import { ConfigError } from '../lib/errors.js'
import type { DialectName } from '../lib/dialects/types.js'

// Two processes and a start per config and dialect: more than .taprc's time per file on a busy machine.
t.setTimeout(600_000)

const folder = join(import.meta.dirname, 'fixtures', 'broken-configs')

interface Case {
  /** A text every problem list of this config holds. */
  expect: string
  /** Environment of both the check and the start. */
  env?: Record<string, string>
  /** The dialect on which this config is fine (a refusal of the other dialect's schema). */
  okOn?: DialectName
}

const cases = JSON.parse(readFileSync(join(folder, 'cases.json'), 'utf8')) as Record<string, Case>

interface Verdict { ok: boolean, problems: string[] }

async function checkVerdict (file: string, databaseUrl: string, env: Record<string, string>): Promise<Verdict> {
  // The config's own folder as working directory: no .env or fastbase.config.* of the checkout is read.
  const run = await fastbase(['check', file], { cwd: folder, env: { ...env, DATABASE_URL: databaseUrl } })
  if (run.code !== 0 && run.code !== 1) throw new Error(`fastbase check exited ${String(run.code)}: ${run.stderr}`)
  const problems = run.stderr.split('\n').filter((line) => line.startsWith('  - ')).map((line) => line.slice(4))
  return { ok: run.code === 0, problems }
}

async function startVerdict (t: Test, file: string, databaseUrl: string, env: Record<string, string>): Promise<Verdict> {
  try {
    await buildApp(t, file, { databaseUrl, env })
    return { ok: true, problems: [] }
  } catch (error) {
    // Anything but a ConfigError (a crash, a database error) is a check `check` does not run.
    if (!(error instanceof ConfigError)) throw error
    return { ok: false, problems: error.problems }
  }
}

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
      t.same(checked, started, 'same verdict, same problem lines')
      if (c.okOn === dialect) {
        t.ok(checked.ok, `fine on ${dialect}`)
      } else {
        t.notOk(checked.ok, 'refused')
        t.ok(checked.problems.some((p) => p.includes(c.expect)), `refused for what it breaks: ${c.expect}`)
      }
    })
  })
}
