// The `fastbase` command as users run it (`--help`, `check`): the compiled dist/lib/cli/bin.js in a
// subprocess (`npm test` builds first). init and exec have files of their own (tap times files out).
import t from 'tap'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { bin, cleanEnv, fastbase, root, skip } from '../../cli-run.js'
import { baseFields } from '../../../lib/config/helpers.js'
import type {} from '../../../schemas/config.js'
import { counted } from '../../../lib/cli/io.js'

t.test('counts in what the commands print agree with their nouns', async (t) => {
  t.same([0, 1, 2].map((n) => counted(n, 'file')), ['0 files', '1 file', '2 files'])
})

t.test('--help', { skip }, async (t) => {
  const top = await fastbase(['--help'])
  t.equal(top.code, 0)
  for (const command of ['check', 'init', 'exec', 'migrate']) t.match(top.stdout, new RegExp(`^  ${command} `, 'm'), `lists ${command}`)
  t.equal((await fastbase([])).code, 0, 'no command shows the help')
  for (const command of ['check', 'init', 'exec', 'migrate']) {
    const help = await fastbase([command, '--help'])
    t.equal(help.code, 0, `${command} --help`)
    t.match(help.stdout, new RegExp(`^Usage: fastbase ${command}`), `${command} --help shows its usage`)
    t.match(help.stdout, /Exit code/, `${command} --help states the exit codes`)
  }
  const unknown = await fastbase(['deploy'])
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown command "deploy"/)
  const badOption = await fastbase(['check', '--nope'])
  t.equal(badOption.code, 2)
  t.match(badOption.stderr, /Unknown option '--nope'[\s\S]*fastbase check --help/)
})

t.test('output into a pipe already closed (`fastbase check | head -0`) is dropped, not a stack trace', { skip }, async (t) => {
  const child = spawn(process.execPath, [bin, 'check', join(root, 'examples', 'bundled', 'fastbase.config.ts')], { cwd: root, env: cleanEnv({ JWT_SECRET: 'x'.repeat(40), JWT_SECRET_USERS: 'y'.repeat(40) }), stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.destroy() // the reader is gone before the config has loaded and the command writes
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'close')
  t.notMatch(stderr, /EPIPE|Unhandled 'error' event|\n\s+at /, 'no stack trace')
  t.equal(code, 0, stderr)
})

t.test('check', { skip }, async (t) => {
  const dir = t.testdir({
    'good.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
      procedures: [],
      tables: [{ name: 'items', autoSetUid: true, fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }] }]
    }),
    'broken.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: '$MISSING_SECRET',
      tabels: [],
      tables: [{ name: 'items', fields: [{ name: 'id', type: 'integr', sqlType: 'text' }, { name: 'id', type: 'text', sqlType: 'text' }] }]
    }),
    'bad-rule.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
      tables: [{ name: 'items', fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true }], extensions: [{ name: 'rules', listRule: 'nope == 1' }] }]
    })
  })

  const good = await fastbase(['check', join(dir, 'good.json')])
  t.equal(good.code, 0, good.stderr)
  t.match(good.stdout, /^config OK: 1 table, 0 actions/)
  t.match(good.stderr, /^warning: .*procedures/m, 'teenybase-compatibility warnings are printed')

  const example = await fastbase(['check', join(root, 'examples', 'bundled', 'fastbase.config.ts')], { env: { JWT_SECRET: 'x'.repeat(40), JWT_SECRET_USERS: 'y'.repeat(40) } })
  t.equal(example.code, 0, example.stderr)
  t.match(example.stdout, /^config OK: 4 tables, 0 actions/)
  const fromEnv = await fastbase(['check'], { env: { FASTBASE_CONFIG: join(dir, 'good.json') } })
  t.match(fromEnv.stdout, /^config OK: 1 table/, 'FASTBASE_CONFIG')
  const bundled = await fastbase(['check'])
  t.equal(bundled.code, 0, bundled.stderr)
  t.match(bundled.stdout, /^config OK: 4 tables/, 'the bundled example, as npm start does')
  t.match(bundled.stderr, /JWT_SECRET is not set/)
  t.match(bundled.stderr, /using config .*examples\/bundled\/fastbase\.config\.ts \(bundled example\)/, 'in the checkout, and it says so')

  const broken = await fastbase(['check', join(dir, 'broken.json')])
  t.equal(broken.code, 1)
  t.equal(broken.stdout, '')
  const lines = broken.stderr.trim().split('\n')
  t.match(lines[0], /^using config .*broken\.json \(argument\), \.env \(none\), database sqlite:/, 'first, what it used')
  t.match(lines[1], /broken\.json: \d+ problems/)
  for (const expected of [
    /^ {2}- jwtSecret: environment variable MISSING_SECRET is not set$/,
    /^ {2}- config: unknown key "tabels" \(did you mean "tables"\?\)$/,
    /^ {2}- tables\[0\]\.fields\[0\]\.type: .*\(did you mean "integer"\?\)$/,
    /^ {2}- tables\[0\]\.fields\[1\]\.name: duplicate field name "id"/
  ]) t.ok(lines.some((line) => expected.test(line)), `lists ${String(expected)}`)

  const badRule = await fastbase(['check', join(dir, 'bad-rule.json')])
  t.equal(badRule.code, 1, 'rules are compiled as at start')
  t.match(badRule.stderr, /tables\.items\.listRule: .*nope/)

  const missing = await fastbase(['check', join(dir, 'none.json')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /none\.json: config file not found/)

  const twoFiles = await fastbase(['check', 'a.json', 'b.json'])
  t.equal(twoFiles.code, 2)
  t.match(twoFiles.stderr, /unexpected argument: b\.json/)
})

/** `npm install` of the scaffold, without the network: links to this checkout and its fastify-cli. */
