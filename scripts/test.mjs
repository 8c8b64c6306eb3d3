// `npm test`: runs the tap suite on SQLite and, when it is reachable, PostgreSQL, then prints
// counts that cannot hide skipped work. The last line is always `N passed, M failed`.
//
// 1. Probes PostgreSQL at FASTBASE_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test).
//    Unreachable: under CI=true that is an error (exit 1); elsewhere a banner says the PostgreSQL
//    half is skipped, and test/helper.ts records those tests as skipped.
//    FASTBASE_TEST_DIALECT=sqlite skips the probe (test/helper.ts then skips the PostgreSQL half and
//    says why); =postgres requires PostgreSQL, as CI does.
// 2. Runs tap (arguments are passed through) and keeps the raw TAP of the whole run in
//    .tap/fastbase-results.tap, parsed afterwards with tap-parser.
// 3. Counts leaf test points (assertions and skipped tests); a subtest that failed without a
//    failing assertion inside (crash, timeout, bad plan) counts as one failure.
// 4. With FASTBASE_TEST_COVERAGE=1 (what .ci/run sets), tap records V8 coverage of the whole run and
//    c8 reports it over every source file (.c8rc.json: which files, and the floor). Under the floor
//    counts as one failure.
// 5. Gates .ci/run ran before the suite and that failed (FASTBASE_CI_FAILED_GATES, space-separated
//    names) count as one failure each, so the last line tells the whole CI run.
// Exit code = tap's, or 1 when coverage is under the floor.
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { Parser } from 'tap-parser'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const resultsFile = join(root, '.tap', 'fastbase-results.tap')
const coverageDir = join(root, '.tap', 'coverage')
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
const PROBE_TIMEOUT_MS = 3000
const RULE = '='.repeat(78)

/** undefined when PostgreSQL answers at `url`, else the reason it does not. */
async function probePostgres (url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message || err.constructor.name : String(err)
  } finally {
    await client.end().catch(() => {})
  }
}

function banner (lines) {
  console.log(['', RULE, ...lines, RULE, ''].join('\n'))
}

/** The reporter named in tap arguments (`-R x`, `-Rx`, `--reporter x`, `--reporter=x`), if any. */
function reporterArg (args) {
  for (let i = 0; i < args.length; i++) {
    const long = /^--reporter(?:=(.*))?$/.exec(args[i])
    if (long) return long[1] ?? args[i + 1]
    if (args[i] === '-R') return args[i + 1]
    if (args[i].startsWith('-R')) return args[i].slice(2)
  }
  return undefined
}

/**
 * Runs tap; resolves with its exit code and the raw TAP of the whole run.
 * A terminal gets tap's `base` reporter and the raw TAP goes to --output-file. Elsewhere (CI logs)
 * the reporter is raw TAP, which this script shows and parses as it streams: tap's --output-file
 * would print raw TAP a second time to stdout when the reporter is `tap` itself.
 */
function runTap (args, env) {
  const chosen = reporterArg(args)
  const reporter = chosen ?? (process.stdout.isTTY ? 'base' : 'tap')
  const tee = reporter === 'tap'
  const tapArgs = [...(chosen === undefined ? [`--reporter=${reporter}`] : []), ...(tee ? [] : ['--output-file', resultsFile]), ...args]
  rmSync(resultsFile, { force: true })
  mkdirSync(dirname(resultsFile), { recursive: true })
  const tap = join(root, 'node_modules', '.bin', 'tap')
  return new Promise((resolvePromise, reject) => {
    const child = spawn(tap, tapArgs, { cwd: root, env, stdio: ['inherit', tee ? 'pipe' : 'inherit', 'inherit'] })
    let output = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk) => {
      output += chunk
      process.stdout.write(chunk)
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (tee) writeFileSync(resultsFile, output)
      resolvePromise({ code: code ?? (signal ? 1 : 0), tap: readResults() })
    })
  })
}

/** Adds the test points of `parser` (and of its subtests) to `totals`. */
function track (parser, path, ancestors, totals) {
  // The subtest whose closing test point comes next in this parser.
  let open
  parser.on('child', (child) => {
    open = { failed: 0 }
    track(child, [...path, child.name], [...ancestors, open], totals)
  })
  parser.on('assert', (res) => {
    const subtest = open
    open = undefined
    if (subtest !== undefined) {
      // Its assertions were counted already, unless it failed without a failing one inside.
      if (!res.ok && !res.todo && subtest.failed === 0) fail([...path, res.name], ancestors, totals)
      return
    }
    if (res.todo) totals.todo++
    else if (res.skip) {
      totals.skip++
      if (res.name.startsWith('postgres: ')) totals.postgresSkipped++
    } else if (res.ok) totals.pass++
    else fail([...path, res.name], ancestors, totals)
  })
}

function fail (path, ancestors, totals) {
  totals.fail++
  totals.failures.push(path.join(' > '))
  for (const node of ancestors) node.failed++
}

function countResults (tap) {
  const totals = { pass: 0, fail: 0, skip: 0, todo: 0, postgresSkipped: 0, failures: [] }
  const parser = new Parser()
  track(parser, [], [], totals)
  parser.end(tap)
  return totals
}

function readResults () {
  try {
    return readFileSync(resultsFile, 'utf8')
  } catch {
    return undefined
  }
}

async function main () {
  const pgUrl = process.env.FASTBASE_TEST_PG_URL || DEFAULT_PG_URL
  const env = { ...process.env }
  const only = process.env.FASTBASE_TEST_DIALECT || undefined
  if (only !== undefined && only !== 'sqlite' && only !== 'postgres') {
    console.error(`ERROR: FASTBASE_TEST_DIALECT must be sqlite or postgres, not ${JSON.stringify(only)}`)
    console.log('0 passed, 1 failed')
    return 2
  }
  const unreachable = only === 'sqlite' ? undefined : await probePostgres(pgUrl)
  if (only === 'sqlite') {
    console.log('FASTBASE_TEST_DIALECT=sqlite: the per-dialect tests run on SQLite only')
  } else if (unreachable === undefined) {
    env.FASTBASE_TEST_PG_URL = pgUrl
    console.log(`PostgreSQL: ${pgUrl} (the suite runs on ${only === 'postgres' ? 'PostgreSQL only, where a test takes a dialect' : 'SQLite and PostgreSQL'})`)
  } else if (process.env.CI === 'true' || only === 'postgres') {
    console.error(`ERROR: PostgreSQL is not reachable at ${pgUrl}: ${unreachable}`)
    console.error(`${only === 'postgres' ? 'FASTBASE_TEST_DIALECT=postgres' : 'CI=true'} requires PostgreSQL; start it or set FASTBASE_TEST_PG_URL.`)
    console.log('0 passed, 1 failed')
    return 1
  } else {
    delete env.FASTBASE_TEST_PG_URL
    banner([
      'POSTGRESQL NOT AVAILABLE: the PostgreSQL half of the suite is SKIPPED',
      `(${pgUrl}: ${unreachable})`,
      'Start PostgreSQL or set FASTBASE_TEST_PG_URL to run it.'
    ])
  }

  const coverage = process.env.FASTBASE_TEST_COVERAGE === '1'
  if (coverage) rmSync(coverageDir, { recursive: true, force: true })
  const tapArgs = [...(coverage ? ['--no-disable-coverage', '--allow-incomplete-coverage', '--allow-empty-coverage', '--coverage-report=none'] : []), ...process.argv.slice(2)]
  const { code: tapCode, tap } = await runTap(tapArgs, env)
  let code = tapCode
  const totals = tap === undefined
    ? { pass: 0, fail: 0, skip: 0, todo: 0, postgresSkipped: 0, failures: [] }
    : countResults(tap)
  if (code !== 0 && totals.fail === 0) {
    // tap failed without a failing test point (it could not start, or wrote no results).
    totals.fail = 1
    totals.failures.push(`tap exited with code ${code}`)
  }

  if (coverage) {
    const floor = await reportCoverage()
    if (floor !== undefined) {
      totals.fail++
      totals.failures.push(floor)
      code ||= 1
    }
  }

  for (const gate of (process.env.FASTBASE_CI_FAILED_GATES ?? '').split(' ').filter(Boolean)) {
    totals.fail++
    totals.failures.push(`gate ${gate} (run before the suite) failed`)
    code ||= 1
  }

  console.log(`\ntap: ${totals.pass} pass, ${totals.fail} fail, ${totals.skip} skip${totals.todo ? `, ${totals.todo} todo` : ''}`)
  for (const failure of totals.failures.slice(0, 20)) console.log(`  failed: ${failure}`)
  if (totals.failures.length > 20) console.log(`  ... and ${totals.failures.length - 20} more`)
  if (unreachable !== undefined) {
    banner([`POSTGRESQL NOT AVAILABLE: ${totals.postgresSkipped} PostgreSQL tests were SKIPPED`])
  }
  console.log(`${totals.pass} passed, ${totals.fail} failed`)
  return code
}

/** Prints c8's summary of the run's coverage; answers why it fails the floor of .c8rc.json, if it does. */
function reportCoverage () {
  const c8 = join(root, 'node_modules', '.bin', 'c8')
  return new Promise((resolvePromise) => {
    const child = spawn(c8, ['report'], { cwd: root, stdio: 'inherit' })
    child.on('error', (err) => { resolvePromise(`coverage could not be reported: ${err.message}`) })
    child.on('close', (status) => { resolvePromise(status === 0 ? undefined : 'coverage is under the floor of .c8rc.json (or could not be read)') })
  })
}

process.exitCode = await main()
