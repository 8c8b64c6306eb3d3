// Record values as readable DOM nodes, by field type. Text only: never parsed as HTML.
import { h } from './dom.js'
import { isPassword } from './schema.js'

const CELL_TEXT_MAX = 200

function clip (text) {
  return text.length > CELL_TEXT_MAX ? `${text.slice(0, CELL_TEXT_MAX)}…` : text
}

/** `2024-01-02T03:04:05.000Z` as `2024-01-02 03:04:05 UTC`; anything unparseable as it is. */
export function formatDate (value) {
  const date = new Date(value)
  if (typeof value !== 'string' && typeof value !== 'number') return String(value)
  if (Number.isNaN(date.getTime())) return String(value)
  const iso = date.toISOString()
  const time = iso.slice(11, 19)
  return `${iso.slice(0, 10)} ${time} UTC`
}

/** The date part (YYYY-MM-DD, UTC) for an <input type="date">. */
export function dateInputValue (value) {
  if (value === null || value === undefined || value === '') return ''
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 10)
}

/**
 * A cell's content for `value` of `field`. File fields get a link from the caller (they need the
 * record id), see views/table.js.
 */
export function formatValue (value, field) {
  if (value === null || value === undefined) return h('span', { class: 'v-null' }, 'null')
  if (isPassword(field)) return h('span', { class: 'v-secret', title: 'Hidden' }, '••••••')
  switch (field.type) {
    case 'bool':
      return h('span', { class: value ? 'v-bool v-true' : 'v-bool v-false' }, value ? 'true' : 'false')
    case 'json': {
      const text = JSON.stringify(value)
      return h('code', { class: 'v-json', title: text.length > CELL_TEXT_MAX ? text.slice(0, 2000) : undefined }, clip(text))
    }
    case 'date':
      return h('time', { class: 'v-date', datetime: String(value), title: String(value) }, formatDate(value))
    case 'number':
    case 'integer':
      return h('span', { class: 'v-number' }, String(value))
    case 'blob':
      return h('span', { class: 'v-null' }, '(binary)')
    default: {
      const text = typeof value === 'string' ? value : JSON.stringify(value)
      return h('span', { class: 'v-text', title: text.length > CELL_TEXT_MAX ? text.slice(0, 2000) : undefined }, clip(text))
    }
  }
}
