// "Settings": the effective config from GET /settings, secrets already replaced by "***" by the server.
import { api, ApiError } from '../api.js'
import { announce, h, replace, uid } from '../dom.js'

const FLAGS = ['primary', 'autoIncrement', 'unique', 'notNull', 'noSelect', 'noInsert', 'noUpdate']

const json = (value) => JSON.stringify(value, null, 2)

function show (value) {
  if (value === null || value === undefined) return h('span', { class: 'v-null' }, 'null')
  if (typeof value === 'object') return h('pre', { class: 'json' }, json(value))
  return h('code', {}, String(value))
}

function general (settings) {
  const entries = Object.entries(settings).filter(([key]) => key !== 'tables' && key !== 'actions')
  return h('div', { class: 'table-wrap' }, h('table', { class: 'records settings' },
    h('caption', {}, 'General settings'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'setting'), h('th', { scope: 'col' }, 'value'))),
    h('tbody', {}, entries.map(([key, value]) => h('tr', {}, h('th', { scope: 'row' }, key), h('td', {}, show(value)))))))
}

function fieldText (field, key) {
  const v = field[key]
  if (v === undefined) return ''
  return typeof v === 'object' ? JSON.stringify(v) : String(v)
}

function tableSection (table) {
  const fields = Array.isArray(table.fields) ? table.fields : []
  const rest = Object.fromEntries(Object.entries(table).filter(([k]) => k !== 'fields' && k !== 'name'))
  return h('details', { class: 'card' },
    h('summary', {}, h('strong', {}, String(table.name)), ` · ${fields.length} fields`),
    h('div', { class: 'table-wrap' }, h('table', { class: 'records' },
      h('caption', {}, `Fields of ${table.name}`),
      h('thead', {}, h('tr', {}, ['name', 'type', 'sqlType', 'usage', 'flags', 'default', 'values'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, fields.map((f) => h('tr', {},
        h('td', {}, String(f.name)),
        h('td', {}, fieldText(f, 'type')),
        h('td', {}, fieldText(f, 'sqlType')),
        h('td', {}, fieldText(f, 'usage')),
        h('td', {}, FLAGS.filter((flag) => f[flag] === true).join(', ')),
        h('td', {}, fieldText(f, 'default')),
        h('td', {}, fieldText(f, 'values'))))))),
    Object.keys(rest).length > 0 ? h('pre', { class: 'json' }, json(rest)) : null)
}

export function renderSettings (root) {
  const headingId = uid('settings')
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Settings')
  const alert = h('div', { class: 'alert', role: 'alert' })
  const body = h('div', {}, h('p', {}, 'Loading settings…'))
  replace(root, h('section', { class: 'view' },
    h('div', { class: 'view-head' }, heading),
    h('p', { class: 'hint' }, 'The effective config. Secret values are never sent to the panel: they show as ***.'),
    alert, body))

  api.get('/settings').then((settings) => {
    const tables = Array.isArray(settings?.tables) ? settings.tables : []
    const actions = Array.isArray(settings?.actions) ? settings.actions : []
    replace(body,
      h('h3', {}, 'General'), general(settings ?? {}),
      h('h3', {}, `Tables (${tables.length})`), tables.map(tableSection),
      h('h3', {}, `Actions (${actions.length})`), actions.length > 0 ? h('pre', { class: 'json' }, json(actions)) : h('p', {}, 'No actions.'),
      h('details', { class: 'card' }, h('summary', {}, 'The whole config as JSON'), h('pre', { class: 'json' }, json(settings))))
  }, (error) => {
    if (!(error instanceof ApiError)) throw error
    replace(body)
    if (error.status !== 401) announce(alert, `Could not load the settings: ${error.message}`)
  })
  return { focus: () => heading.focus() }
}
