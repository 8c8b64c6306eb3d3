// The panel's record list shows a file field's smallest listed thumbnail (fetched with the admin
// token, shown from a blob URL), in Debian's chromium; a field without thumbs shows its name only.
import t from 'tap'
import { launch, listen, openPanel, signIn } from '../fixtures/panel/browser.js'
import { adminToken, buildApp } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { image } from '../fixtures/files/images.js'

const browser = await launch(t)
if (browser !== undefined) {
  t.test('record lists show thumbnails', async (t) => {
    const config: DatabaseSettings = {
      jwtSecret: 'x',
      appUrl: 'http://localhost',
      tables: [{
        name: 'pics',
        autoSetUid: true,
        fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }, { name: 'photo', type: 'file', sqlType: 'text', thumbs: ['300x300', '40x40', '0x100'] }, { name: 'doc', type: 'file', sqlType: 'text' }],
        extensions: [{ name: 'rules', listRule: null, viewRule: null }]
      }]
    }
    const app = await buildApp(t, config)
    const served = await listen(t, app)
    const body = new FormData()
    body.append('@filePayload', new Blob([new Uint8Array(await image('jpeg', 400, 300))], { type: 'image/jpeg' }), 'beach.jpg')
    body.append('@filePayload', new Blob([new Uint8Array(await image('png', 50, 50))], { type: 'image/png' }), 'plain.png')
    body.append('@jsonPayload', JSON.stringify({ values: { title: 'one', photo: '@filePayload.0', doc: '@filePayload.1' } }))
    const inserted = await fetch(`${served.api}/table/pics/insert`, { method: 'POST', body, headers: { authorization: `Bearer ${adminToken}` } })
    t.equal(inserted.status, 200)
    const { page, requests, errors } = await openPanel(t, browser, `${served.panel}#/table/pics`)
    await signIn(page, adminToken)
    const thumb = page.locator('td.t-file img.thumb')
    await thumb.first().waitFor()
    await page.waitForFunction(() => { const img = document.querySelector('img.thumb') as HTMLImageElement | null; return img?.complete === true && img.naturalWidth > 0 })
    t.equal(await thumb.count(), 1, 'one thumbnail: the field with thumbs')
    t.same(await thumb.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]), [40, 40], 'the smallest listed size')
    t.ok(requests.some((url) => url.includes('?thumb=40x40')), 'asked for 40x40')
    t.same(errors, [], 'no page errors')
  })
}
