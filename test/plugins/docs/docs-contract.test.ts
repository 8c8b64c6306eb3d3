// What the API document says about the server, checked against the server: the every-feature
// project's document (test/fixtures/openapi/config.ts) and the bundled example's. The linters
// (test/plugins/docs/openapi-lint-*), Swagger UI (test/plugins/docs/swagger-ui-*) and a generated client (test/plugins/docs/openapi-client.test.ts)
// use the same documents; this file pins the contract items of docs/openapi.md one by one.
import t from 'tap'
import { adminToken } from '../../helper.js'
import { JWT_SECRET } from '../../fixtures/openapi/config.js'
import { documentOf, exampleEnv, projects } from '../../fixtures/openapi/documents.js'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const operations = (doc: any): Array<{ path: string, method: string, op: any }> =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    METHODS.filter((m) => item[m] !== undefined).map((method) => ({ path, method, op: item[method] })))

t.test('every-feature document', async (t) => {
  const app = await projects.find((p) => p.name === 'every-feature')!.build(t)
  const doc = await documentOf(app)
  const text = JSON.stringify(doc)
  const ops = operations(doc)

  t.test('identity: operationIds, servers, info, tags, descriptions', async (t) => {
    const ids = ops.map(({ op }) => op.operationId)
    t.equal(ids.filter((id) => typeof id !== 'string').length, 0, 'every operation has an operationId')
    t.equal(new Set(ids).size, ids.length, 'and they are unique')
    for (const id of ['docs_list', 'docs_list_post', 'docs_insert', 'docs_view', 'docs_edit', 'users_auth_login', 'users_auth_sign_up', 'users_auth_oauth', 'users_auth_google_login', 'action_count_docs', 'files_download', 'health', 'admin_migrations_apply']) {
      t.ok(ids.includes(id), id)
    }
    t.same(doc.servers, [{ url: '/', description: 'This server (paths carry the API prefix /api/v1)' }])
    t.match(doc.info, { title: 'OpenAPI Every Feature', contact: { url: 'http://127.0.0.1' }, license: { identifier: 'MIT' } })
    t.notMatch(text, /Default Response/, 'no "Default Response"')
    t.ok(ops.every(({ op }) => typeof op.description === 'string' && op.description !== ''), 'every operation has a description')
    const tags = new Set(doc.tags.map((tag: any) => tag.name))
    t.ok(ops.every(({ op }) => op.tags.every((tag: string) => tags.has(tag))), 'every tag is declared')
  })

  t.test('downloads: a named path parameter and binary answers', async (t) => {
    t.notOk(Object.keys(doc.paths).some((p) => p.includes('{*}')), 'no {*} path')
    const download = doc.paths['/api/v1/files/{table}/{rid}/{path}']?.get
    t.ok(download, 'the download path names its parameter')
    t.same(download.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name), ['table', 'rid', 'path'])
    t.same(download.parameters.find((p: any) => p.name === 'table').schema.enum, ['docs', 'users'], 'the tables with file fields')
    t.match(download.responses['200'].content['*/*'].schema, { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' })
    t.ok(download.responses['206'].headers['Content-Range'], '206 with Content-Range')
    t.ok(download.responses['304'] && download.responses['416'], '304 and 416')
    t.notOk(download.responses['200'].content['application/json'], 'not declared as JSON')
  })

  t.test('multipart bodies: @filePayload binary parts and an @jsonPayload JSON part', async (t) => {
    for (const op of ['insert', 'update', 'edit/{id}']) {
      const multipart = doc.paths[`/api/v1/table/docs/${op}`].post.requestBody.content['multipart/form-data']
      t.ok(multipart, `docs ${op} takes multipart`)
      t.same(multipart.schema.required, ['@jsonPayload'])
      t.match(multipart.schema.properties['@filePayload'], { type: 'array', items: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } })
      t.match(multipart.schema.properties['@jsonPayload'].$ref, /^#\/components\/schemas\/docs\.(insert|update|changes)$/)
      t.match(JSON.stringify(multipart.schema.properties['@jsonPayload'].example), /"cover":"@filePayload\.0"/, 'its example references the first file')
    }
    t.notOk(doc.paths['/api/v1/table/counters/insert'].post.requestBody.content['multipart/form-data'], 'no multipart for a table without files')
  })

  t.test('records: required and nullable from the fields', async (t) => {
    const docs = doc.components.schemas.docs
    t.same(docs.required, ['id', 'created', 'updated', 'title', 'body', 'kind', 'score', 'due', 'meta', 'cover', 'attachment', 'owner_id'], 'every column but the noSelect one')
    t.same(docs.properties.id, { type: 'string' }, 'the primary key is a non-null string')
    t.same(docs.properties.title, { type: 'string' }, 'a notNull field is never null')
    t.same(docs.properties.score, { type: ['number', 'null'] }, 'a nullable field may be null')
    t.same(docs.properties.kind, { type: ['string', 'null'], enum: ['note', 'page', null] })
    t.match(docs.properties.internal.description, /admins only/)
    const counters = doc.components.schemas.counters
    t.same(counters.properties.n, { type: 'integer' }, 'an integer primary key')
    t.same(doc.components.schemas['docs.list'].properties.items.items, { $ref: '#/components/schemas/docs' }, 'lists reference the record')
    const session = doc.components.schemas['users.session']
    t.same(session.required, ['token', 'refresh_token', 'record', 'aal'])
    t.equal(session.properties.record.$ref, '#/components/schemas/users', 'the session record is typed')
    for (const path of ['sign-up', 'refresh-token']) {
      t.same(doc.paths[`/api/v1/table/users/auth/${path}`].post.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/users.session' }, path)
    }
    // A sign-in that a second factor can stop answers a session or the challenge (decision D115).
    t.same(doc.components.schemas['users.sign-in'].anyOf, [{ $ref: '#/components/schemas/users.session' }, { $ref: '#/components/schemas/MfaChallenge' }])
    for (const path of ['login-password', 'google-login', 'login-token']) {
      t.same(doc.paths[`/api/v1/table/users/auth/${path}`].post.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/users.sign-in' }, path)
    }
  })

  t.test('write bodies leave out the fields the server refuses', async (t) => {
    const insert = Object.keys(doc.components.schemas['users.new'].properties)
    const changes = Object.keys(doc.components.schemas['users.changes'].properties)
    const signUp = Object.keys(doc.components.schemas['users.sign-up'].properties)
    for (const field of ['created', 'updated', 'email_verified', 'password_salt']) {
      t.notOk(insert.includes(field), `insert: no ${field}`)
      t.notOk(changes.includes(field), `update: no ${field}`)
      t.notOk(signUp.includes(field), `sign-up: no ${field}`)
    }
    t.notOk(changes.includes('id') || changes.includes('email'), 'update: no id, no email (noUpdate)')
    t.match(doc.components.schemas['users.new'].properties.id.description, /Generated/, 'insert: the id may be given, else it is generated')
    t.notOk(doc.components.schemas['users.new'].required.includes('id'))
    t.same(doc.components.schemas['users.sign-up'].required, ['username', 'email', 'password', 'name', 'passwordConfirm'])
    t.notOk(doc.components.schemas['counters.new'].required?.includes('n'), 'an autoincrement key is optional')
  })

  t.test('the server really refuses what the write bodies leave out', async (t) => {
    for (const [path, body] of [
      ['/api/v1/table/docs/insert', { values: { title: 'x', created: '2020-01-01T00:00:00.000Z' } }],
      ['/api/v1/table/users/auth/sign-up', { username: 'u', email: 'u@example.com', password: 'pw-123456', passwordConfirm: 'pw-123456', name: 'U', email_verified: true }]
    ] as const) {
      const res = await app.inject({ method: 'POST', url: path, payload: body })
      const verified = path.includes('sign-up') ? res.statusCode >= 400 || (res.json().record.email_verified === false) : res.statusCode === 403
      t.ok(verified, `${path}: ${res.statusCode} ${res.body.slice(0, 200)}`)
    }
  })

  t.test('edit: the default answer is the uid alone, and the document says so', async (t) => {
    const schemaOf = (ref: any): any => ref.$ref === undefined ? ref : doc.components.schemas[ref.$ref.split('/').pop()]
    const edited = schemaOf(doc.paths['/api/v1/table/docs/edit/{id}'].post.responses['200'].content['application/json'].schema)
    const [created] = (await app.inject({ method: 'POST', url: '/api/v1/table/docs/insert', headers: { authorization: `Bearer ${adminToken}` }, payload: { values: { title: 'edit me', body: 'b' }, returning: 'id' } })).json()
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/docs/edit/${created.id}`, headers: { authorization: `Bearer ${adminToken}` }, payload: { title: 'edited' } })
    t.same(res.json(), { id: created.id }, 'the live default answer')
    t.same((edited.required ?? []).filter((key: string) => !(key in res.json())), [], 'every key the document requires is in it')
    t.match(edited.properties.id, { type: 'string' }, 'the uid is typed')
  })

  t.test('login-password: the body names the account by identity, email or username', async (t) => {
    const login = doc.paths['/api/v1/table/users/auth/login-password'].post.requestBody.content['application/json'].schema
    const branches: any[] = login.anyOf ?? login.oneOf ?? [login]
    const allows = (body: Record<string, unknown>): boolean => branches.some((b) => (b.required ?? []).every((key: string) => key in body))
    const refused = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { password: 'pw-123456' } })
    t.match(refused.json(), { code: 400, data: { identity: { _errors: ['identity is required'] } } }, 'the server refuses a password alone')
    t.notOk(allows({ password: 'pw-123456' }), 'and so does the document')
    for (const key of ['identity', 'email', 'username']) {
      t.ok(allows({ [key]: 'nobody@example.com', password: 'pw-123456' }), `the document allows ${key}`)
      const res = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { [key]: 'nobody@example.com', password: 'pw-123456' } })
      t.same(res.json(), { code: 400, message: 'Invalid username or password', data: {} }, `the server reads ${key} (and finds no such account)`)
    }
  })

  t.test('forms: object fields are sent as deepObject (`values[title]=...`), an insert form holds one record', async (t) => {
    const insert = doc.paths['/api/v1/table/docs/insert'].post.requestBody.content['application/x-www-form-urlencoded']
    t.same(insert.encoding, { values: { style: 'deepObject', explode: true } })
    t.same(doc.components.schemas[insert.schema.$ref.split('/').pop()].properties.values.$ref, '#/components/schemas/docs.new', 'one record, not a batch')
    t.same(doc.paths['/api/v1/table/docs/update'].post.requestBody.content['application/x-www-form-urlencoded'].encoding, { setValues: { style: 'deepObject', explode: true }, set: { style: 'deepObject', explode: true } })
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/docs/insert', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'values%5Btitle%5D=from%20a%20form&values%5Bbody%5D=b&returning=title' })
    t.same(res.json(), [{ title: 'from a form' }], 'the server reads the deepObject form')
  })

  t.test('every status a route answers, with the shared error body', async (t) => {
    for (const { path, method, op } of ops) {
      for (const [code, response] of Object.entries(op.responses) as Array<[string, any]>) {
        if (/^[45]/.test(code)) t.match(response.$ref, /^#\/components\/responses\//, `${method} ${path} ${code} is a shared response`)
      }
      if (op.requestBody !== undefined && !path.endsWith('/realtime')) {
        t.ok(op.responses['413'] && op.responses['415'], `${method} ${path}: 413 and 415`)
      }
      t.ok(op.responses['401'], `${method} ${path}: 401 (a bad token)`)
    }
    for (const [name, response] of Object.entries(doc.components.responses) as Array<[string, any]>) {
      t.same(response.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, name)
    }
    t.same(doc.components.schemas.Error.required, ['code', 'message', 'data'])
    t.ok(doc.paths['/api/v1/table/docs/view/{id}'].get.responses['404'], 'view: 404')
    t.ok(doc.paths['/api/v1/migrations'].post.responses['409'], 'migrations: 409')
    t.notOk(doc.paths['/api/v1/table/users/auth/login-password'].post.responses['429'], 'no 429 with rateLimit: false')
  })

  t.test('no secret of the config is in the document', async (t) => {
    for (const secret of [JWT_SECRET, 'openapi-users-secret', 'google-secret-value', 'corp-secret-value', adminToken]) {
      t.notOk(text.includes(secret), `does not contain ${secret.slice(0, 12)}...`)
    }
  })

  t.test('the document is the same on every fetch (the finishing pass runs once)', async (t) => {
    t.same(await documentOf(app), doc)
    const ui = await app.inject({ method: 'GET', url: '/api/v1/doc/ui/json' })
    t.same(ui.json(), doc, 'Swagger UI reads the same document')
  })

  t.test('shared components instead of inline copies', async (t) => {
    // About 7 KB of it are the backup and readiness routes, about 14 KB the email-code and
    // second-factor routes (the users' six, the admins' four), about 1 KB the file-token route and
    // the download's thumb / token parameters.
    t.ok(text.length < 156_000, `${text.length} bytes (the routes before backups took about 200 KB of inline copies before)`)
    t.equal((text.match(/"title":\{"type":"string"\}/g) ?? []).length, 3, 'a docs field is written once per schema (record, new, changes), not once per route')
  })
})

t.test('example document: rate limits are declared', async (t) => {
  const app = await projects.find((p) => p.name === 'example')!.build(t)
  const doc = await documentOf(app)
  t.ok(doc.paths['/api/v1/table/users/auth/login-password'].post.responses['429'], 'login-password: 429')
  t.ok(doc.paths['/api/v1/table/users/auth/sign-up'].post.responses['429'], 'sign-up: 429')
  const text = JSON.stringify(doc)
  for (const secret of Object.values(exampleEnv)) t.notOk(text.includes(secret), 'no JWT secret in the document')
})
