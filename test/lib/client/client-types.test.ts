// The client typed from the project: `fastbase types` also augments fastbase/client, so an app
// compiled with `tsc --strict` gets typed rows, checked inserts and params, and compile errors for
// unknown tables, fields and actions.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, linkDependencies, skip, tsc } from '../../cli-run.js'
import { freshDir } from '../../helper.js'
import { clientConfig } from '../../fixtures/client/server.js'

const APP = `import { createClient, FastbaseError, FastbaseMfaRequired, type Row } from 'fastbase/client'

const fb = createClient('https://api.example.com')
const { items, total } = await fb.table('notes').list({ where: 'public == true', order: '-created', limit: 10 })
const body: string | null = items[0].body
const views: number | null = items[0].views
const count: number = total
const [created] = await fb.table('notes').insert({ values: { owner: 'u1', body: 'hi', public: true, attachment: new Blob(['x']) }, returning: '*' })
const note: Row<'notes'> = created
await fb.table('notes').edit(note.id, { views: 2 }, { returning: 'views', onProgress: ({ loaded, total }) => console.log(loaded / total) })
await fb.table('notes').update({ where: 'views > 1', setValues: { public: false }, set: { views: 'views + 1' } })
await fb.action('my_notes', { min: 1 })
await fb.action('my_notes')
const user = await fb.auth.login({ identity: 'ann', password: 'secret password' })
const stop = fb.table('notes').subscribe({ where: 'public == true' }, (event) => {
  if (event.type === 'change') console.log(event.action, event.record.body)
  if (event.type === 'refetch') console.log(event.items.length)
})
stop()
try { await fb.table('notes').view('x') } catch (error) { if (error instanceof FastbaseError) console.log(error.status, error.code, error.data) }
console.log(body, views, count, user, fb.files.url('notes', note.id, 'a.txt'))
await fb.auth.requestOtp({ email: 'ann@example.com' })
await fb.auth.loginWithOtp({ email: 'ann@example.com', code: '123456' })
await fb.auth.loginWithOtp({ token: 'from-the-link' })
const { secret, uri } = await fb.auth.mfa.enroll()
const recoveryCodes: string[] = await fb.auth.mfa.confirm('123456')
try { await fb.auth.login({ identity: 'ann', password: 'secret password' }) } catch (error) {
  if (error instanceof FastbaseMfaRequired) {
    const methods: string[] = error.methods
    await fb.auth.verifyMfa({ challenge: error.challenge, code: '123456' })
    await fb.auth.verifyMfa({ challenge: error.challenge, recoveryCode: recoveryCodes[0] })
    console.log(methods, error.expiresIn, error.status, secret, uri)
  }
}
await fb.auth.finishRedirect()
await fb.auth.mfa.disable({ password: 'secret password' })
await fb.auth.mfa.disable({ recoveryCode: 'ABCD-EFGH' })
`

t.test('an app compiles against the generated types, and a wrong one does not', { skip }, async (t) => {
  const dir = freshDir(t, 'client-types-')
  writeFileSync(join(dir, 'fastbase.config.json'), JSON.stringify(clientConfig('http://127.0.0.1:9/certs', [])))
  const run = await fastbase(['types', 'fastbase.config.json', '--out', 'fastbase-types.d.ts'], { cwd: dir })
  t.equal(run.code, 0, run.stderr)
  linkDependencies(dir, ['fastify', '@sinclair'])
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  // DOM: the app runs in a browser (File, Blob); no @types/node.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, noEmit: true, skipLibCheck: true }, files: ['app.ts', 'fastbase-types.d.ts'] }))
  writeFileSync(join(dir, 'app.ts'), APP)
  const good = await tsc(['-p', dir])
  t.equal(good.code, 0, `the app compiles:\n${good.output}`)

  // Each line is wrong on its own, so one compile reports them all.
  writeFileSync(join(dir, 'app.ts'), `${APP}
await fb.table('notez').list()
await fb.table('notes').insert({ values: { owner: 'u1', bodyy: 'x' } })
await fb.table('notes').insert({ values: { owner: 1 } })
const wrong: string = items[0].views
await fb.action('my_notez', {})
await fb.action('my_notes', { min: 'one' })
await fb.table('notes').edit('id', { views: new Blob(['x']) })
await fb.auth.verifyMfa({ challenge: 'c' })
await fb.auth.loginWithOtp({ email: 'ann@example.com' })
console.log(wrong)
`)
  const bad = await tsc(['-p', dir])
  t.equal(bad.code, 2, 'does not compile')
  // APP ends with a newline, and a blank line separates the wrong lines: the first is at length + 1.
  const first = APP.split('\n').length + 1
  for (const [offset, error] of [
    [0, /error TS2345: Argument of type '"notez"' is not assignable to parameter of type 'TableName'/],
    [1, /error TS2353: Object literal may only specify known properties, and 'bodyy' does not exist/],
    [2, /error TS2322: Type 'number' is not assignable to type 'string/],
    [3, /error TS2322: Type 'number \| null' is not assignable to type 'string'/],
    [4, /error TS2345: Argument of type '"my_notez"' is not assignable to parameter of type '"my_notes"'/],
    [5, /error TS2322: Type 'string' is not assignable to type 'number'/],
    [6, /error TS2322: Type 'Blob' is not assignable to type 'number/],
    [7, /error TS2345: Argument of type '\{ challenge: string; \}' is not assignable to parameter of type 'MfaProof'/],
    [8, /error TS2345: Argument of type '\{ email: string; \}' is not assignable to parameter of type 'OtpProof'/]
  ] as const) t.match(bad.output, new RegExp(`app\\.ts\\(${first + offset},[0-9]+\\): ${error.source}`), `line ${offset + 1} of the wrong app`)
  t.equal(bad.output.split('\n').filter((l) => l.includes('error TS')).length, 9, `exactly the nine errors:\n${bad.output}`)
})
