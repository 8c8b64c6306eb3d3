// Admin tokens end with the password that issued them: a restart (or another instance on the same
// database) with a changed or removed superadmin / editor / viewer secret refuses the old tokens at
// once, while roles whose secret did not change keep theirs.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { baseFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

function configWith (admin: DatabaseSettings['admin']): DatabaseSettings {
  return {
    jwtSecret: 'global-secret',
    appUrl: 'https://app.example.com',
    rateLimit: false,
    ...(admin === undefined ? {} : { admin }),
    tables: [{
      name: 'notes',
      autoSetUid: true,
      fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: null, viewRule: null, createRule: null, updateRule: null, deleteRule: null }]
    }]
  }
}

async function signIn (app: FastifyInstance, password: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { password } })
  if (res.statusCode !== 200) throw new Error(`admin sign-in: ${res.statusCode} ${res.body}`)
  return res.json().token as string
}

/** The status of an admin-only read with `token`. */
async function readWith (app: FastifyInstance, token: string): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/api/v1/table/notes/select', headers: { authorization: `Bearer ${token}` } })).statusCode
}

forEachDialect(t, 'a changed or removed admin secret ends that role\'s tokens', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  // The editor's and viewer's passwords come from the environment, as a deployment sets them.
  const passwords = { editorPassword: '$EDITOR_PASSWORD', viewerPassword: '$VIEWER_PASSWORD' }
  const first = await buildApp(t, configWith(passwords), { dialect, databaseUrl, adminServiceToken: 'service-1', env: { EDITOR_PASSWORD: 'editor-1', VIEWER_PASSWORD: 'viewer-1' } })
  const tokens = { superadmin: await signIn(first, 'service-1'), editor: await signIn(first, 'editor-1'), viewer: await signIn(first, 'viewer-1') }
  for (const [role, token] of Object.entries(tokens)) t.equal(await readWith(first, token), 200, `${role}: the token works where it was issued`)

  const unchanged = await buildApp(t, configWith(passwords), { dialect, databaseUrl, adminServiceToken: 'service-1', env: { EDITOR_PASSWORD: 'editor-1', VIEWER_PASSWORD: 'viewer-1' } })
  for (const [role, token] of Object.entries(tokens)) t.equal(await readWith(unchanged, token), 200, `${role}: a restart with the same secrets keeps the token`)

  // The viewer's password changed, the editor's was removed, the service token stayed.
  const rotated = await buildApp(t, configWith({ viewerPassword: '$VIEWER_PASSWORD' }), { dialect, databaseUrl, adminServiceToken: 'service-1', env: { VIEWER_PASSWORD: 'viewer-2' } })
  t.equal(await readWith(rotated, tokens.viewer), 401, 'viewer: a token issued under the old password is refused')
  t.equal(await readWith(rotated, tokens.editor), 401, 'editor: a token of a removed role is refused')
  t.equal(await readWith(rotated, tokens.superadmin), 200, 'superadmin: unchanged secret, the token still works')
  t.equal(await readWith(rotated, await signIn(rotated, 'viewer-2')), 200, 'the new viewer password signs in and its token works')

  const noneLeft = await buildApp(t, configWith(undefined), { dialect, databaseUrl, adminServiceToken: 'service-2' })
  t.equal(await readWith(noneLeft, tokens.superadmin), 401, 'superadmin: a rotated service token ends the tokens it issued')
  t.equal(await readWith(noneLeft, tokens.viewer), 401, 'viewer: no admin section at all')
  t.equal(await readWith(noneLeft, await signIn(noneLeft, 'service-2')), 200, 'the new service token signs in')
})

forEachDialect(t, 'one password cannot stand for another role', async (t, dialect) => {
  const app = await buildApp(t, configWith({ editorPassword: 'same-secret', viewerPassword: 'viewer-secret' }), { dialect })
  const viewer = await signIn(app, 'viewer-secret')
  const [header, payload, signature] = viewer.split('.')
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
  const asEditor = Buffer.from(JSON.stringify({ ...claims, aud: 'editor' })).toString('base64url')
  t.equal(await readWith(app, `${header}.${asEditor}.${signature}`), 401, 'a viewer token relabelled as editor')
  const write = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { authorization: `Bearer ${viewer}` }, payload: { values: { title: 'x' } } })
  t.equal(write.statusCode, 403, 'the viewer token is still a viewer')
})
