// Config loading, secret resolution, validation and the config plugin, without the rest of the app.
import t from 'tap'
import { utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { authFields, baseFields, defineConfig, sql, sqlRaw, sqlValue } from '../../../lib/config/helpers.js'
import { resolveSecrets } from '../../../lib/config/secrets.js'
import { ConfigError, validateConfig } from '../../../lib/config/validate.js'
import { loadConfigFile } from '../../../lib/config/load.js'
import { loadBundledExample, loadFresher } from '../../../lib/config/example.js'
import { loadConfig } from '../../../lib/kernel/config.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const exampleFile = join(root, 'examples', 'bundled', 'fastbase.config.ts')

// A small valid config. tables[0] = users (fields 0-2 base, 3-11 auth), tables[1] = posts
// (0-2 base, 3 author_id, 4 status). Each case edits a fresh copy.
function validConfig (): any {
  return structuredClone({
    jwtSecret: 'top-secret',
    appUrl: 'http://localhost:3000',
    tables: [
      {
        name: 'users',
        autoSetUid: true,
        fields: [...baseFields, ...authFields],
        extensions: [{ name: 'auth', jwtSecret: 'users-secret' }, { name: 'rules', listRule: 'auth.uid == id' }]
      },
      {
        name: 'posts',
        autoSetUid: true,
        fields: [
          ...baseFields,
          { name: 'author_id', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } },
          { name: 'status', type: 'select', sqlType: 'text', values: ['draft', 'live'] }
        ],
        indexes: [{ fields: ['author_id'] }]
      }
    ],
    actions: [{
      name: 'publish',
      params: { id: 'string', count: { type: 'integer', optional: true, default: 1 } },
      sql: { type: 'UPDATE', table: 'posts', set: { status: { l: 'live' } }, where: { q: 'id = {:id}' } }
    }]
  })
}

function problemsOf (config: unknown): string[] {
  const result = validateConfig(config)
  return 'problems' in result ? result.problems : []
}

const TYPES = 'text, number, bool, email, url, editor, date, select, json, file, relation, password, integer, blob'
const SQL_TYPES = 'text, integer, real, blob, null, json, date, datetime, time, timestamp, float, int, boolean, numeric'
const TEXT_TYPES = 'text, json, date, file, editor, select, email, url, relation, password'

t.test('scaffold helpers', async (t) => {
  t.same(sql`CURRENT_TIMESTAMP`, { q: 'CURRENT_TIMESTAMP' })
  t.same(sql`OLD.${'created'} != NEW.${'created'} AND n > ${1}`, { q: 'OLD.created != NEW.created AND n > 1' }, 'values are spliced as SQL text, as in teenybase')
  // @ts-expect-error an object is neither SQL text nor a literal: a type error, and a runtime error for JS configs
  t.throws(() => sql`x = ${{ a: 1 }}`, /sqlValue/)
  t.same(sqlValue(false), { l: false })
  t.same(sqlValue({ a: 1 }), { l: { a: 1 } })
  t.same(sqlRaw('n > {:min}', { min: 3 }), { q: 'n > {:min}', p: { min: 3 } })
  t.same(sqlRaw('1'), { q: '1' })
  t.notOk('p' in sqlRaw('1'))
  const config = validConfig()
  t.equal(defineConfig(config), config)

  t.same(baseFields, [
    { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true, noUpdate: true },
    { name: 'created', type: 'date', sqlType: 'timestamp', usage: 'record_created', default: { q: 'CURRENT_TIMESTAMP' }, notNull: true, noInsert: true, noUpdate: true },
    { name: 'updated', type: 'date', sqlType: 'timestamp', usage: 'record_updated', default: { q: 'CURRENT_TIMESTAMP' }, notNull: true, noInsert: true, noUpdate: true }
  ])
  t.same(authFields, [
    { name: 'username', type: 'text', sqlType: 'text', notNull: true, unique: true, usage: 'auth_username' },
    { name: 'email', type: 'email', sqlType: 'text', notNull: true, unique: true, noUpdate: true, usage: 'auth_email' },
    { name: 'email_verified', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false }, noInsert: true, noUpdate: true, usage: 'auth_email_verified' },
    { name: 'password', type: 'text', sqlType: 'text', notNull: true, noSelect: true, usage: 'auth_password' },
    { name: 'password_salt', type: 'text', sqlType: 'text', notNull: true, noSelect: true, noInsert: true, noUpdate: true, usage: 'auth_password_salt' },
    { name: 'name', type: 'text', sqlType: 'text', notNull: true, usage: 'auth_name' },
    { name: 'avatar', type: 'file', sqlType: 'text', usage: 'auth_avatar' },
    { name: 'role', type: 'text', sqlType: 'text', usage: 'auth_audience' },
    { name: 'meta', type: 'json', sqlType: 'json', usage: 'auth_metadata' }
  ])
  t.ok(Object.isFrozen(baseFields) && Object.isFrozen(baseFields[0]), 'shared scaffolds cannot be edited by accident')
})

t.test('a valid config passes, normalised and copied', async (t) => {
  const input = validConfig()
  input.tables[1].fields[4].sqlType = 'TEXT'
  input.tables[1].fields.push({ name: 'pin', type: 'password', sqlType: 'text', notNull: true, default: undefined })
  const result = validateConfig(input)
  t.same(problemsOf(input), [])
  if (!('config' in result)) throw new Error('expected a valid config')
  t.equal(result.config.tables[1].fields[4].sqlType, 'text', 'sqlType is lower-cased')
  t.equal(input.tables[1].fields[4].sqlType, 'TEXT', 'the input is not modified')
  t.notOk('default' in result.config.tables[1].fields[5], 'undefined members are dropped')
})

// Each case: an edit of the valid config and the exact problem list it must produce.
const CASES: { name: string, edit: (c: any) => void, problems: string[] }[] = [
  {
    name: 'missing top-level key',
    edit: (c) => { delete c.appUrl },
    problems: ['appUrl: is required']
  },
  {
    name: 'empty secret with an auth table',
    edit: (c) => { c.jwtSecret = '' },
    problems: ['jwtSecret: must not be empty: tables[0] has an auth extension']
  },
  {
    name: 'unknown keys, with and without a suggestion',
    edit: (c) => { c.tabels = []; c.tables[0].fieldz = []; c.tables[1].fields[3].colour = 'red' },
    problems: [
      'config: unknown key "tabels" (did you mean "tables"?)',
      'tables[0]: unknown key "fieldz" (did you mean "fields"?)',
      'tables[1].fields[3]: unknown key "colour"'
    ]
  },
  {
    name: 'unknown type lists the allowed ones',
    edit: (c) => { c.tables[1].fields[3].type = 'texty'; c.tables[1].fields[4].type = 'selcet' },
    problems: [
      `tables[1].fields[3].type: must be one of ${TYPES} (did you mean "text"?)`,
      `tables[1].fields[4].type: must be one of ${TYPES} (did you mean "select"?)`
    ]
  },
  {
    name: 'unknown sqlType lists the allowed ones',
    edit: (c) => { c.tables[1].fields[3].sqlType = 'varchar' },
    problems: [`tables[1].fields[3].sqlType: must be one of ${SQL_TYPES}`]
  },
  {
    name: 'bad identifier',
    edit: (c) => { c.tables.push({ name: 'my-tags', fields: [{ name: 'tag', type: 'text', sqlType: 'text' }] }) },
    problems: ['tables[2].name: must start with a letter or underscore and contain only letters, digits and underscores']
  },
  {
    name: 'wrong kind of value',
    edit: (c) => { c.tables[1].autoSetUid = 'yes'; c.tables[1].fields = {} },
    problems: ['tables[1].autoSetUid: must be a boolean', 'tables[1].fields: must be an array']
  },
  {
    name: 'a default that is not sql, sqlValue or a string',
    edit: (c) => { c.tables[1].fields[4].default = 5 },
    problems: ['tables[1].fields[4].default: must be sql`...` ({ q }), sqlValue(x) ({ l }) or a SQL string (for a literal write sqlValue(5))']
  },
  {
    name: 'an extension is checked against the variant its name selects',
    edit: (c) => { c.tables[0].extensions[0] = { name: 'auth', jwtSecret: 'x', jwtTokenDuration: 0 }; c.tables[0].extensions[1].listRul = 'true' },
    problems: [
      'tables[0].extensions[0].jwtTokenDuration: must be at least 1',
      'tables[0].extensions[1]: unknown key "listRul" (did you mean "listRule"?)'
    ]
  },
  {
    name: 'unknown extension',
    edit: (c) => { c.tables[1].extensions = [{ name: 'crud' }] },
    problems: ['tables[1].extensions[0].name: must be one of rules, auth']
  },
  {
    name: 'union of a literal and an object',
    edit: (c) => { c.rateLimit = true },
    problems: ['rateLimit: must be false or an object']
  },
  {
    name: 'duplicate table names',
    edit: (c) => { c.tables.push({ name: 'users', fields: [{ name: 'tag', type: 'text', sqlType: 'text' }] }) },
    problems: ['tables[2].name: duplicate table name "users" (also tables[0])']
  },
  {
    name: 'duplicate field names',
    edit: (c) => { c.tables[1].fields[4].name = 'author_id' },
    problems: ['tables[1].fields[4].name: duplicate field name "author_id" (also tables[1].fields[3])']
  },
  {
    name: 'foreign key to a missing table',
    edit: (c) => { c.tables[1].fields[3].foreignKey.table = 'people' },
    problems: ['tables[1].fields[3].foreignKey.table: table "people" does not exist']
  },
  {
    name: 'foreign key to a missing column',
    edit: (c) => { c.tables[1].fields[3].foreignKey.column = 'uid' },
    problems: ['tables[1].fields[3].foreignKey.column: column "uid" does not exist in table "users"']
  },
  {
    name: 'foreign key with a different sqlType',
    edit: (c) => { Object.assign(c.tables[1].fields[3], { type: 'integer', sqlType: 'integer' }) },
    problems: ['tables[1].fields[3].sqlType: "integer" does not match the sqlType "text" of users.id it references']
  },
  {
    name: 'type not allowed with sqlType',
    edit: (c) => { c.tables[1].fields[3].type = 'bool' },
    problems: [`tables[1].fields[3].type: "bool" is not allowed with sqlType "text" (allowed: ${TEXT_TYPES})`]
  },
  {
    name: 'password type needs a text sqlType',
    edit: (c) => { c.tables[1].fields.push({ name: 'pin', type: 'password', sqlType: 'integer' }) },
    problems: ['tables[1].fields[5].type: "password" is not allowed with sqlType "integer" (allowed: number, integer, bool, select, relation)']
  },
  {
    name: 'two fields with one record usage',
    edit: (c) => { c.tables[1].fields[3].usage = 'record_uid'; c.tables[1].fields[4].usage = 'record_created' },
    problems: [
      'tables[1].fields[3].usage: only one field per table may have usage record_uid (already tables[1].fields[0])',
      'tables[1].fields[4].usage: only one field per table may have usage record_created (already tables[1].fields[1])'
    ]
  },
  {
    name: 'autoSetUid without a text record_uid',
    edit: (c) => { c.tables.push({ name: 'tags', autoSetUid: true, fields: [{ name: 'id', type: 'integer', sqlType: 'integer', usage: 'record_uid', primary: true }] }) },
    problems: ['tables[2].autoSetUid: needs a field with usage record_uid and type text']
  },
  {
    name: 'allowWildcard',
    edit: (c) => { c.tables[1].allowWildcard = true },
    problems: ['tables[1].allowWildcard: true is not supported (* always expands to the table\'s columns)']
  },
  {
    name: 'auth extension requirements, all reported at once',
    edit: (c) => { c.tables.push({ name: 'members', fields: [{ name: 'n', type: 'text', sqlType: 'text' }], extensions: [{ name: 'auth', jwtSecret: 'x' }] }) },
    problems: [
      'tables[2].extensions[0]: the auth extension needs a field with usage record_uid',
      'tables[2].extensions[0]: the auth extension needs a field with usage auth_email',
      'tables[2].extensions[0]: the auth extension needs a field with usage auth_password',
      'tables[2].extensions[0]: the auth extension needs autoSetUid: true on the table'
    ]
  },
  {
    name: 'an auth table\'s user ids are never hidden (sign-up answers them, tokens carry them)',
    edit: (c) => { c.tables[0].fields[0].noSelect = true; c.tables[0].extensions[1].fieldRules = { id: 'false' } },
    problems: [
      'tables[0].extensions[1].fieldRules.id: the id of an auth table\'s users cannot have a field rule: sign-up answers it and every token carries it',
      'tables[0].fields[0].noSelect: the id of an auth table\'s users cannot be hidden: sign-up answers it and every token carries it'
    ]
  },
  {
    name: 'one rules and one auth extension per table',
    edit: (c) => { c.tables[0].extensions.push({ name: 'rules' }, { name: 'auth', jwtSecret: 'y' }) },
    problems: [
      'tables[0].extensions[2].name: only one rules extension is allowed per table',
      'tables[0].extensions[3].name: only one auth extension is allowed per table'
    ]
  },
  {
    name: 'notNull with a null default',
    edit: (c) => {
      Object.assign(c.tables[1].fields[3], { notNull: true, default: sqlValue(null) })
      Object.assign(c.tables[1].fields[4], { notNull: true, default: sql`NULL` })
    },
    problems: [
      'tables[1].fields[3].default: a null default contradicts notNull',
      'tables[1].fields[4].default: a null default contradicts notNull'
    ]
  },
  {
    name: 'select values of the wrong kind, and values on a non-select field',
    edit: (c) => {
      c.tables[1].fields[4].values = ['draft', 3]
      c.tables[1].fields[3].values = ['x']
      c.tables[1].fields.push({ name: 'level', type: 'select', sqlType: 'integer', values: [1, 2.5] })
    },
    problems: [
      'tables[1].fields[3].values: only fields of type select take values',
      'tables[1].fields[4].values[1]: must be a string (sqlType text)',
      'tables[1].fields[5].values[1]: must be an integer (sqlType integer)'
    ]
  },
  {
    name: 'index on missing columns (list and comma-separated forms)',
    edit: (c) => { c.tables[1].indexes = [{ fields: ['author_id', 'nope'] }, { fields: 'status, gone DESC' }] },
    problems: [
      'tables[1].indexes[0].fields[1]: column "nope" does not exist in table "posts"',
      'tables[1].indexes[1].fields: column "gone" does not exist in table "posts"'
    ]
  },
  {
    name: 'duplicate action names',
    edit: (c) => { c.actions.push({ ...c.actions[0] }) },
    problems: ['actions[1].name: duplicate action name "publish" (also actions[0])']
  },
  {
    name: 'action with both or neither of sql and steps',
    edit: (c) => {
      c.actions[0].steps = { type: 'DELETE', table: 'posts' }
      c.actions.push({ name: 'nothing' })
    },
    problems: ['actions[0]: must have exactly one of sql or steps', 'actions[1]: must have exactly one of sql or steps']
  },
  {
    name: 'action statements on missing tables',
    edit: (c) => {
      c.actions[0].sql = [{ type: 'SELECT', table: 'posts' }, { type: 'SELECT', table: 'drafts' }]
      c.actions.push({ name: 'clean', steps: { type: 'DELETE', table: 'trash' } })
    },
    problems: ['actions[0].sql[1].table: table "drafts" does not exist', 'actions[1].steps.table: table "trash" does not exist']
  },
  {
    name: 'param default of the wrong type, bad param shorthand and name',
    edit: (c) => {
      c.actions[0].params.count.default = 1.5
      c.actions[0].params.id = 'str'
      c.actions[0].params['bad-name'] = 'string'
    },
    problems: [
      'actions[0].params: key "bad-name" must start with a letter or underscore and contain only letters, digits and underscores',
      'actions[0].params.count.default: must be an integer (the param\'s type is integer)',
      'actions[0].params.id: must be one of string, number, integer, boolean or an object'
    ]
  }
]

t.test('every problem class gives its path-prefixed message', async (t) => {
  for (const { name, edit, problems } of CASES) {
    const config = validConfig()
    edit(config)
    t.same(problemsOf(config), problems, name)
  }
  t.same(problemsOf(null), ['config: must be an object'])
  t.same(problemsOf({}), ['appUrl: is required', 'jwtSecret: is required', 'tables: is required'])
})

t.test('secrets resolve from the env object', async (t) => {
  const input = {
    ...validConfig(),
    jwtSecret: '$JWT_SECRET',
    jwtIssuer: '$db',
    email: { from: 'a@b.c', smtp: '$SMTP_URL' },
    authProviders: [{ name: 'google', clientId: '$GOOGLE_ID', clientSecret: 'literal', redirectUrl: '$NOT_A_SECRET' }],
    storage: { bucket: '$BUCKET', s3: { secretAccessKey: '$S3_KEY' } },
    admin: { viewerPassword: '$VIEWER' }
  }
  input.tables[0].extensions[0].jwtSecret = '$USERS_SECRET'
  const env = { JWT_SECRET: 'j', SMTP_URL: 'smtp://x', GOOGLE_ID: 'g', BUCKET: 'b', S3_KEY: 'k', VIEWER: 'v', USERS_SECRET: 'u' }
  const { config, problems } = resolveSecrets(input, env)
  t.same(problems, [])
  t.equal(config.jwtSecret, 'j')
  t.equal(config.jwtIssuer, '$db', 'not a secret position')
  t.equal(config.email.smtp, 'smtp://x')
  t.same(config.authProviders[0], { name: 'google', clientId: 'g', clientSecret: 'literal', redirectUrl: '$NOT_A_SECRET' })
  t.same(config.storage, { bucket: 'b', s3: { secretAccessKey: 'k' } })
  t.equal(config.admin.viewerPassword, 'v')
  t.equal(config.tables[0].extensions[0].jwtSecret, 'u')
  t.equal(input.jwtSecret, '$JWT_SECRET', 'the input is not modified')
  t.equal(input.tables[0].extensions[0].jwtSecret, '$USERS_SECRET')

  const missing = resolveSecrets(input, { ...env, JWT_SECRET: '', USERS_SECRET: undefined })
  t.same(missing.problems, [
    'jwtSecret: environment variable JWT_SECRET is not set',
    'tables[0].extensions[0].jwtSecret: environment variable USERS_SECRET is not set'
  ])
  const odd = resolveSecrets({ admin: { editorPassword: '$2b$hash' } }, {})
  t.same(odd.problems, ['admin.editorPassword: starts with "$" but the rest is not an environment variable name'])
  t.notMatch(odd.problems.join(), /2b/, 'the value is not echoed')
})

t.test('appUrl and allowedRedirectUrls read $NAME from the env; a value that is not a URL is a config problem', async (t) => {
  const input = { ...validConfig(), appUrl: '$APP_URL', allowedRedirectUrls: ['$FRONT_URL'] }
  const resolved = resolveSecrets(input, { APP_URL: 'https://app.example.com', FRONT_URL: 'https://front.example.com/' })
  t.same(resolved.problems, [])
  t.equal(resolved.config.appUrl, 'https://app.example.com')
  t.same(resolved.config.allowedRedirectUrls, ['https://front.example.com/'])
  t.same(problemsOf(resolved.config), [])

  const unset = resolveSecrets(input, {})
  t.same([...unset.problems].sort(), ['allowedRedirectUrls[0]: environment variable FRONT_URL is not set', 'appUrl: environment variable APP_URL is not set'])
  t.same(problemsOf({ ...validConfig(), appUrl: 'localhost:3000' }), ['appUrl: must be an absolute http(s) URL (email links, OAuth callbacks and the origin cookie-authenticated writes come from are built from it)'])
  t.same(problemsOf({ ...validConfig(), appUrl: 'https://user:pw@example.com' }), ['appUrl: must not carry a user name or password (email links, OAuth callbacks and the origin cookie-authenticated writes come from are built from it)'])
  t.notMatch(problemsOf({ ...validConfig(), appUrl: 'https://user:pw@example.com' }).join(), /pw/, 'the value is not echoed')
})

t.test('ConfigError lists problems without a stack trace', async (t) => {
  const err = new ConfigError(['jwtSecret: is required', 'tables[0].name: must not be empty'])
  t.equal(err.message, 'Invalid fastbase config:\n  - jwtSecret: is required\n  - tables[0].name: must not be empty')
  t.equal(err.stack, err.message)
  t.notMatch(err.stack ?? '', /^ {4}at /m)
  t.same(err.problems, ['jwtSecret: is required', 'tables[0].name: must not be empty'])
  t.ok(err instanceof Error)
})

t.test('loading config files', async (t) => {
  const config = { jwtSecret: 's', appUrl: 'http://x', tables: [] }
  const dir = t.testdir({
    'c.json': JSON.stringify(config),
    'bad.json': '{\n  "tables": [],\n  "jwtSecret": \n}',
    'c.mjs': `export default ${JSON.stringify(config)}`,
    'fn.mjs': `export default async () => (${JSON.stringify(config)})`,
    'named.mjs': 'export const jwtSecret = "s"\nexport const appUrl = "http://x"\nexport const tables = []',
    'c.cjs': `module.exports = ${JSON.stringify(config)}`,
    'throws.mjs': 'throw new Error("boom")',
    'c.ts': `interface Cfg { jwtSecret: string, appUrl: string, tables: unknown[] }\nconst c: Cfg = ${JSON.stringify(config)}\nexport default c`,
    'fn.ts': `export default (): object => (${JSON.stringify(config)})`,
    'c.yaml': 'tables: []'
  })
  for (const name of ['c.json', 'c.mjs', 'fn.mjs', 'named.mjs', 'c.cjs', 'c.ts', 'fn.ts']) {
    t.same(await loadConfigFile(join(dir, name)), config, name)
  }
  t.same(await loadConfigFile(exampleFile).then((c: any) => c.tables.map((table: any) => table.name)), ['users', 'posts', 'comments', 'guestbook'],
    'the example loads, its ../lib/config/helpers.js import resolved by jiti')

  await t.rejects(loadConfigFile(join(dir, 'bad.json')), { name: 'ConfigError', problems: [`${join(dir, 'bad.json')}: invalid JSON at line 4, column 1: unexpected "}"`] })
  await t.rejects(loadConfigFile(join(dir, 'none.json')), { name: 'ConfigError', problems: [`${join(dir, 'none.json')}: config file not found`] })
  await t.rejects(loadConfigFile(join(dir, 'c.yaml')), { name: 'ConfigError', problems: [/unsupported config file type/] })
  await t.rejects(loadConfigFile(join(dir, 'throws.mjs')), { name: 'ConfigError', problems: [/throws\.mjs: could not be loaded: boom/] })
})

t.test('the bundled example: its compiled copy while fresh, else its source', async (t) => {
  const dir = t.testdir({ 'c.ts': 'export default { from: "source" }', 'c.js': 'export default { from: "compiled" }' })
  const source = join(dir, 'c.ts')
  const compiled = join(dir, 'c.js')
  const at = (file: string, seconds: number) => utimes(file, seconds, seconds)
  await at(source, 1_000_000)
  await at(compiled, 1_000_000)
  t.same(await loadFresher(source, compiled), { from: 'compiled' }, 'as new as the source: the compiled copy')
  await at(source, 1_000_100)
  t.same(await loadFresher(source, compiled), { from: 'source' }, 'the source edited after the build: the source')
  t.same(await loadFresher(source, join(dir, 'missing.js')), { from: 'source' }, 'not built: the source')
  t.same((await loadBundledExample() as any).tables.map((table: any) => table.name), ['users', 'posts', 'comments', 'guestbook'], 'the example itself')
})

t.test('the bundled example is valid', async (t) => {
  const loaded = await loadConfigFile(exampleFile)
  const resolved = resolveSecrets(loaded, { JWT_SECRET: 'a', JWT_SECRET_USERS: 'b' })
  t.same(resolved.problems, [])
  t.same(problemsOf(resolved.config), [])
  t.same(resolveSecrets(loaded, {}).problems, [
    'jwtSecret: environment variable JWT_SECRET is not set',
    'tables[0].extensions[0].jwtSecret: environment variable JWT_SECRET_USERS is not set'
  ])
})

/** A Fastify logger that keeps its lines, to check warnings. */
function capture (): { lines: () => any[], logger: { level: string, stream: Writable } } {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  return { lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)), logger: { level: 'info', stream } }
}

t.test('kernel config: loads the config and resolves the options', async (t) => {
  const dataDir = join(t.testdir(), 'nested', 'data')
  const loaded = await loadConfig({
    options: {
      config: { ...validConfig(), jwtSecret: '$SECRET' },
      dataDir,
      adminServiceToken: '',
      env: { SECRET: 'from-env', ADMIN_SERVICE_TOKEN: 'svc', NODE_ENV: 'production' }
    },
    bundledExampleAllowed: false,
    log: Fastify().log
  })
  t.equal(loaded.config.jwtSecret, 'from-env')
  t.same(loaded.options, {
    dataDir,
    databaseUrl: `sqlite:${join(dataDir, 'fastbase.sqlite')}`,
    adminServiceToken: 'svc',
    origins: [],
    exposeErrors: false
  })
})

t.test('kernel config: options from env, config path from FASTBASE_CONFIG', async (t) => {
  const dir = t.testdir({ 'cfg.json': JSON.stringify({ ...validConfig(), appName: 'From file' }) })
  const loaded = await loadConfig({
    options: { env: { FASTBASE_CONFIG: join(dir, 'cfg.json'), FASTBASE_DATA_DIR: join(dir, 'd'), DATABASE_URL: 'postgres://u@h/db', ADMIN_SERVICE_TOKEN: '' } },
    bundledExampleAllowed: false,
    log: Fastify().log
  })
  t.equal(loaded.config.appName, 'From file')
  t.same(loaded.options, { dataDir: join(dir, 'd'), databaseUrl: 'postgres://u@h/db', adminServiceToken: undefined, exposeErrors: true, origins: [] })
})

t.test('kernel config: an invalid config stops the start with every problem', async (t) => {
  const config = validConfig()
  config.jwtSecret = '$MISSING'
  config.tables[1].fields[3].foreignKey.table = 'people'
  const err: any = await loadConfig({ options: { config, env: {}, dataDir: t.testdir() }, bundledExampleAllowed: false, log: Fastify().log }).then(() => undefined, (e) => e)
  t.ok(err instanceof ConfigError)
  t.equal(err.message, [
    'Invalid fastbase config:',
    '  - jwtSecret: environment variable MISSING is not set',
    '  - tables[1].fields[3].foreignKey.table: table "people" does not exist'
  ].join('\n'))
  t.notMatch(err.stack, /^ {4}at /m)
})

t.test('kernel config: the bundled example runs with dev secrets and a warning', async (t) => {
  const log = capture()
  const loaded = await loadConfig({ options: { env: { JWT_SECRET: 'set' }, dataDir: t.testdir() }, bundledExampleAllowed: true, log: Fastify({ logger: log.logger }).log })
  t.same(loaded.config.tables.map((table) => table.name), ['users', 'posts', 'comments', 'guestbook'])
  t.equal(loaded.config.jwtSecret, 'set')
  t.match(loaded.config.tables[0].extensions?.[0], { name: 'auth', jwtSecret: /^dev-only-insecure-/ })
  const warnings = log.lines().filter((l) => l.level === 40).map((l) => l.msg)
  t.equal(warnings.length, 1)
  t.match(warnings[0], /JWT_SECRET_USERS is not set/)
})

t.test('kernel config: no dev secrets for the bundled example in production', async (t) => {
  await t.rejects(loadConfig({ options: { env: { NODE_ENV: 'production' }, dataDir: t.testdir() }, bundledExampleAllowed: true, log: Fastify().log }), {
    name: 'ConfigError',
    problems: [
      'jwtSecret: environment variable JWT_SECRET is not set',
      'tables[0].extensions[0].jwtSecret: environment variable JWT_SECRET_USERS is not set'
    ]
  })
})
