// An `<img>` in Debian's chromium (playwright-core) shows a protected image when its URL carries a
// file token, and its thumbnail at the listed size; without the token, or with another user's, it
// shows nothing (the download is a 404). The page is on another origin than the API, as an SPA's is.
import t from 'tap'
import { launch } from '../fixtures/panel/browser.js'
import { api, listening, signUp } from '../fixtures/realtime/client.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { image } from '../fixtures/files/images.js'

const config: DatabaseSettings = {
  jwtSecret: 'file-token-browser-secret',
  appUrl: 'http://localhost',
  rateLimit: false,
  tables: [{
    name: 'users',
    autoSetUid: true,
    fields: [...baseFields, ...authFields],
    extensions: [{ name: 'auth', jwtSecret: 'users-secret' }, { name: 'rules', viewRule: 'id == auth.uid', createRule: 'true' }]
  }, {
    name: 'docs',
    autoSetUid: true,
    fields: [...baseFields, { name: 'owner_id', type: 'text', sqlType: 'text' }, { name: 'photo', type: 'file', sqlType: 'text', thumbs: ['64x64'] }],
    extensions: [{ name: 'rules', viewRule: 'owner_id == auth.uid', createRule: 'owner_id == auth.uid' }]
  }]
}

const browser = await launch(t)
if (browser !== undefined) {
  t.test('<img src="...?token=">', async (t) => {
    const { app, base } = await listening(t, config)
    t.teardown(() => app.server.closeAllConnections())
    const ann = await signUp(base, 'ann')
    const bob = await signUp(base, 'bob')
    const body = new FormData()
    body.append('@filePayload', new Blob([new Uint8Array(await image('png', 320, 200))], { type: 'image/png' }), 'p.png')
    body.append('@jsonPayload', JSON.stringify({ values: { owner_id: ann.id, photo: '@filePayload.0' }, returning: ['id', 'photo'] }))
    const [doc] = await (await fetch(`${base}/api/v1/table/docs/insert`, { method: 'POST', body, headers: { authorization: `Bearer ${ann.token}` } })).json() as any
    const annToken = (await api(base, '/files/token', {}, ann.token)).body.token as string
    const bobToken = (await api(base, '/files/token', {}, bob.token)).body.token as string
    const src = (query: string) => `${base}/api/v1/files/docs/${doc.id}/${doc.photo}${query}`

    const context = await browser.newContext()
    t.teardown(() => context.close())
    const page = await context.newPage()
    // A page of another origin (about:blank), as an SPA served elsewhere: only the URL authenticates.
    await page.setContent(`<!doctype html>${[
      ['with-token', src(`?token=${annToken}`)],
      ['thumb', src(`?thumb=64x64&token=${annToken}`)],
      ['no-token', src('')],
      ['other-user', src(`?token=${bobToken}`)]
    ].map(([id, url]) => `<img id="${id}" src="${url}">`).join('')}`)
    await page.waitForFunction(() => [...document.images].every((img) => img.complete))
    const widths = await page.evaluate(() => Object.fromEntries([...document.images].map((img) => [img.id, [img.naturalWidth, img.naturalHeight]])))
    t.same(widths['with-token'], [320, 200], 'the token shows the image')
    t.same(widths.thumb, [64, 64], 'and its thumbnail')
    t.same(widths['no-token'], [0, 0], 'without a token: nothing')
    t.same(widths['other-user'], [0, 0], 'with another user\'s token: nothing')
  })
}
