// File tokens (POST /files/token, `?token=` on downloads and thumbnails) on both dialects, as an
// attacker tries them: another user's token, a token after logout and after a password change, a
// token for a file its rule stopped allowing, an expired or tampered token, a file token as a
// bearer token and an access token as a file token, and an admin or anonymous caller asking for one.
import t from 'tap'
import { forEachDialect, adminToken } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { api, listening, signUp } from '../fixtures/realtime/client.js'
import { image } from '../fixtures/files/images.js'

const config: DatabaseSettings = {
  jwtSecret: 'file-token-test-secret',
  appUrl: 'http://localhost',
  rateLimit: false,
  files: { tokenDuration: 120 },
  tables: [{
    name: 'users',
    autoSetUid: true,
    fields: [...baseFields, ...authFields],
    extensions: [
      { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 3600 },
      { name: 'rules', listRule: 'id == auth.uid', viewRule: 'id == auth.uid', createRule: 'true', updateRule: 'id == auth.uid', deleteRule: null }
    ]
  }, {
    name: 'docs',
    autoSetUid: true,
    fields: [
      ...baseFields,
      { name: 'owner_id', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } },
      { name: 'photo', type: 'file', sqlType: 'text', thumbs: ['50x50'] }
    ],
    extensions: [{ name: 'rules', listRule: 'owner_id == auth.uid', viewRule: 'owner_id == auth.uid', createRule: 'owner_id == auth.uid', updateRule: 'owner_id == auth.uid', deleteRule: 'owner_id == auth.uid' }]
  }]
}

forEachDialect(t, 'file tokens', async (t, dialect) => {
  const { app, base } = await listening(t, config, { dialect })
  t.teardown(() => app.server.closeAllConnections())
  const ann = await signUp(base, 'ann')
  const bob = await signUp(base, 'bob')
  const png = await image('png', 200, 100)
  const body = new FormData()
  body.append('@filePayload', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'secret.png')
  body.append('@jsonPayload', JSON.stringify({ values: { owner_id: ann.id, photo: '@filePayload.0' }, returning: ['id', 'photo'] }))
  const inserted = await fetch(`${base}/api/v1/table/docs/insert`, { method: 'POST', body, headers: { authorization: `Bearer ${ann.token}` } })
  const [doc] = await inserted.json() as any
  const fileUrl = (query: string) => `${base}/api/v1/files/docs/${doc.id}/${doc.photo}${query}`
  const download = async (query: string, headers: Record<string, string> = {}) => {
    const res = await fetch(fileUrl(query), { headers })
    const bytes = Buffer.from(await res.arrayBuffer())
    return { status: res.status, code: res.headers.get('fastbase-error-code'), cache: res.headers.get('cache-control'), bytes }
  }
  const tokenFor = async (token?: string) => await api(base, '/files/token', {}, token)

  const annFile = await tokenFor(ann.token)
  t.equal(annFile.status, 200)
  t.equal(annFile.body.expiresIn, 120, 'files.tokenDuration')
  t.type(annFile.body.token, 'string')

  t.test('the owner\'s token downloads and thumbnails, privately', async (t) => {
    t.equal((await download('')).status, 404, 'anonymous, no token: 404')
    const res = await download(`?token=${annFile.body.token}`)
    t.equal(res.status, 200)
    t.same(res.bytes, png, 'the file')
    t.equal(res.cache, 'private, no-cache')
    const thumb = await download(`?thumb=50x50&token=${annFile.body.token}`)
    t.equal(thumb.status, 200, 'a thumbnail with the token')
    t.not(thumb.bytes.length, png.length)
    t.equal((await download(`?token=${annFile.body.token}`, { authorization: `Bearer ${ann.token}` })).status, 200, 'with her own bearer token too')
  })

  t.test('a token never widens access', async (t) => {
    const bobFile = await tokenFor(bob.token)
    t.equal(bobFile.status, 200)
    const res = await download(`?token=${bobFile.body.token}`)
    t.equal(res.status, 404, 'bob\'s token on ann\'s file: 404')
    t.equal(res.code, 'FB_ERR_FILE_NOT_FOUND')
    const mixed = await download(`?token=${annFile.body.token}`, { authorization: `Bearer ${bob.token}` })
    t.equal(mixed.status, 401, 'ann\'s token sent by bob (his own credentials): refused')
    t.equal(mixed.code, 'FB_ERR_FILE_TOKEN')
    t.equal((await download(`?token=${annFile.body.token}`, { authorization: `Bearer ${adminToken}` })).code, 'FB_ERR_FILE_TOKEN', 'with an admin\'s credentials: refused too')
  })

  t.test('tokens are of one kind only', async (t) => {
    const asBearer = await download('', { authorization: `Bearer ${annFile.body.token}` })
    t.equal(asBearer.status, 401, 'a file token is no access token')
    t.equal(asBearer.code, 'FB_ERR_INVALID_TOKEN')
    t.equal((await api(base, '/table/docs/list', {}, annFile.body.token)).status, 401, 'nor anywhere else')
    const access = await download(`?token=${ann.token}`)
    t.equal(access.status, 401, 'an access token is no file token')
    t.equal(access.code, 'FB_ERR_FILE_TOKEN')
    const [h, p, s] = annFile.body.token.split('.')
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString())
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, id: bob.id })).toString('base64url')}.${s}`
    t.equal((await download(`?token=${forged}`)).code, 'FB_ERR_FILE_TOKEN', 'claims changed: refused')
    t.equal((await download('?token=garbage')).code, 'FB_ERR_FILE_TOKEN', 'garbage: refused')
    const at = app.fastbase.auth.tables.get('users')!
    const expired = at.fileKey.sign({ cid: 'users', id: ann.id, sid: claims.sid, exp: Math.floor(Date.now() / 1000) - 5 })
    t.equal((await download(`?token=${expired}`)).code, 'FB_ERR_FILE_TOKEN', 'expired: refused')
    const fresh = at.fileKey.sign({ cid: 'users', id: ann.id, sid: claims.sid }, 60)
    t.equal((await download(`?token=${fresh}`)).status, 200, 'the same claims signed now: accepted (so the one above failed on its expiry)')
  })

  t.test('only a signed-in user gets one', async (t) => {
    const anonymous = await tokenFor()
    t.equal(anonymous.status, 401)
    t.equal((await tokenFor(adminToken)).status, 401, 'an admin has no session to bind it to')
  })

  t.test('a file the rule stopped allowing: 404 with a valid token', async (t) => {
    const other = await signUp(base, 'cat')
    const body = new FormData()
    body.append('@filePayload', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'c.png')
    body.append('@jsonPayload', JSON.stringify({ values: { owner_id: other.id, photo: '@filePayload.0' }, returning: ['id', 'photo'] }))
    const [c] = await (await fetch(`${base}/api/v1/table/docs/insert`, { method: 'POST', body, headers: { authorization: `Bearer ${other.token}` } })).json() as any
    const token = (await tokenFor(other.token)).body.token
    const url = `${base}/api/v1/files/docs/${c.id}/${c.photo}?token=${token}`
    t.equal((await fetch(url)).status, 200, 'allowed')
    t.equal((await api(base, '/table/docs/update', { setValues: { owner_id: bob.id }, where: `id == '${c.id}'` }, adminToken)).status, 200)
    t.equal((await fetch(url)).status, 404, 'the row now belongs to bob: 404')
    t.equal((await fetch(`${base}/api/v1/files/docs/${c.id}/${c.photo}?thumb=50x50&token=${token}`)).status, 404, 'its thumbnail too')
  })

  t.test('a token dies with its session', async (t) => {
    const login = async () => (await api(base, '/table/users/auth/login-password', { identity: 'ann', password: 'a long password 1' })).body.token as string
    const second = await login()
    const token = (await tokenFor(second)).body.token
    t.equal((await download(`?token=${token}`)).status, 200)
    t.equal((await api(base, '/table/users/auth/logout', {}, second)).status, 200)
    const after = await download(`?token=${token}`)
    t.equal(after.status, 401, 'after logout: 401')
    t.equal(after.code, 'FB_ERR_FILE_TOKEN')

    const third = await login()
    const thirdToken = (await tokenFor(third)).body.token
    t.equal((await download(`?token=${thirdToken}`)).status, 200)
    const changed = await api(base, '/table/users/auth/change-password', { passwordCurrent: 'a long password 1', password: 'another long password 2', passwordConfirm: 'another long password 2' }, ann.token)
    t.equal(changed.status, 200, JSON.stringify(changed.body))
    t.equal((await download(`?token=${thirdToken}`)).code, 'FB_ERR_FILE_TOKEN', 'a password change ends the other sessions and their tokens')
  })
})
