// The panel's shell: session (sign-in, sign-out, expiry), the navigation and a hash router
// (#/table/<name>, #/actions, #/migrations, #/backups, #/settings, #/two-factor) so a reload stays where it was.
import { api, API_BASE, ApiError, useToken } from './api.js'
import { h, replace } from './dom.js'
import { tablesOf } from './schema.js'
import { clearSession, loadSession, permissions, saveSession } from './session.js'
import { renderSignIn } from './views/sign-in.js'
import { renderTable } from './views/table.js'
import { renderActions } from './views/actions.js'
import { renderMigrations } from './views/migrations.js'
import { renderBackups } from './views/backups.js'
import { renderSettings } from './views/settings.js'
import { renderTwoFactor } from './views/two-factor.js'

const root = document.getElementById('app')
const EXPIRED = 'Your session has expired. Sign in again.'
const ROLE_TEXT = {
  superadmin: 'everything: records, actions, migrations, backups',
  editor: 'read and write records, run actions',
  viewer: 'read only'
}

let session = null
let settings = null
let tables = new Map()
let expiryTimer
let main
let nav

for (const [selector, path] of [['a[href$="/doc/ui"]', '/doc/ui'], ['a[href$="/health"]', '/health']]) {
  document.querySelector(`.site-footer ${selector}`)?.setAttribute('href', API_BASE.replace(/\/$/, '') + path)
}

function signOut (message) {
  clearTimeout(expiryTimer)
  clearSession()
  session = null
  settings = null
  useToken(null)
  for (const dialog of document.querySelectorAll('dialog')) dialog.remove()
  document.title = 'Sign in · fastbase admin'
  renderSignIn(root, { message, onSignedIn })
}

function onSignedIn (answer) {
  session = saveSession(answer)
  start(true)
}

async function start (focus) {
  useToken(session.token, () => signOut(EXPIRED))
  clearTimeout(expiryTimer)
  // setTimeout holds at most 2^31-1 ms (24.8 days); admin tokens live hours.
  expiryTimer = setTimeout(() => signOut(EXPIRED), Math.min(Math.max(0, session.expiresAt - Date.now()), 2 ** 31 - 1))
  replace(root, h('main', { class: 'signin' }, h('p', { role: 'status' }, 'Loading…')))
  try {
    settings = await api.get('/settings')
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.status === 401) return
    replace(root, h('main', { class: 'signin' },
      h('p', { role: 'alert' }, `The panel could not load the config: ${error.message}`),
      h('button', { type: 'button', class: 'button', onclick: () => signOut() }, 'Sign out')))
    return
  }
  tables = tablesOf(settings)
  shell()
  route(focus)
}

function shell () {
  const appName = typeof settings?.appName === 'string' && settings.appName !== '' ? settings.appName : 'fastbase'
  const link = (href, text) => h('li', {}, h('a', { href }, text))
  main = h('main', { id: 'main', class: 'content', tabindex: '-1' })
  nav = h('nav', { class: 'sidebar', 'aria-label': 'Panel' },
    h('h2', { class: 'nav-title', id: 'nav-tables' }, 'Tables'),
    tables.size === 0
      ? h('p', { class: 'hint' }, 'The config has no tables.')
      : h('ul', { 'aria-labelledby': 'nav-tables' }, [...tables.keys()].map((name) => link(`#/table/${encodeURIComponent(name)}`, name))),
    h('h2', { class: 'nav-title', id: 'nav-admin' }, 'Admin'),
    h('ul', { 'aria-labelledby': 'nav-admin' }, link('#/actions', 'Actions'), link('#/migrations', 'Migrations'), link('#/backups', 'Backups'), link('#/settings', 'Settings'), link('#/two-factor', 'Two-factor sign-in')))
  const skip = h('a', { class: 'skip', href: '#main', onclick: (event) => { event.preventDefault(); main.focus() } }, 'Skip to content')
  replace(root,
    skip,
    h('header', { class: 'topbar' },
      h('p', { class: 'brand' }, `${appName} admin`),
      h('p', { class: 'who' }, 'Signed in as ', h('strong', {}, session.role), ` (${ROLE_TEXT[session.role] ?? 'unknown role'})`),
      h('button', { type: 'button', class: 'button', onclick: () => signOut() }, 'Sign out')),
    h('div', { class: 'layout' }, nav, main))
}

function parseHash () {
  const hash = location.hash.replace(/^#\/?/, '')
  const [path, query = ''] = hash.split('?', 2)
  const [view, ...rest] = path.split('/')
  let name = rest.join('/')
  try {
    name = decodeURIComponent(name)
  } catch {}
  return { view, name, query: new URLSearchParams(query) }
}

function route (focus) {
  if (session === null || main === undefined) return
  let { view, name, query } = parseHash()
  if (view === '' || (view === 'table' && name === '')) {
    const first = tables.keys().next().value
    history.replaceState(null, '', first === undefined ? '#/settings' : `#/table/${encodeURIComponent(first)}`)
    ;({ view, name, query } = parseHash())
  }
  for (const a of nav.querySelectorAll('a')) {
    const current = a.getAttribute('href') === (view === 'table' ? `#/table/${encodeURIComponent(name)}` : `#/${view}`)
    if (current) a.setAttribute('aria-current', 'page')
    else a.removeAttribute('aria-current')
  }
  const can = permissions(session.role)
  let shown
  let title = view
  if (view === 'table' && tables.has(name)) {
    shown = renderTable(main, { table: tables.get(name), query, can, limit: settings?.maxLimit })
    title = name
  } else if (view === 'actions') {
    shown = renderActions(main, { settings, can })
    title = 'Actions'
  } else if (view === 'migrations') {
    shown = renderMigrations(main, { can })
    title = 'Migrations'
  } else if (view === 'backups') {
    shown = renderBackups(main, { can })
    title = 'Backups'
  } else if (view === 'settings') {
    shown = renderSettings(main)
    title = 'Settings'
  } else if (view === 'two-factor') {
    shown = renderTwoFactor(main, { can })
    title = 'Two-factor sign-in'
  } else {
    replace(main, h('section', { class: 'view' }, h('h2', { tabindex: '-1' }, 'Not found'),
      h('p', { role: 'alert' }, view === 'table' ? `The config has no table named ${name}.` : 'There is no such page in the panel.')))
    title = 'Not found'
  }
  document.title = `${title} · fastbase admin`
  if (focus) (shown?.focus ?? (() => main.querySelector('h2')?.focus()))()
}

window.addEventListener('hashchange', () => route(true))

session = loadSession()
if (session === null) signOut()
else start(false)
