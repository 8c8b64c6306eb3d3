// "Actions": every action of the config with a form for its params and "Run" (POST /action/{name}).
import { api, ApiError } from '../api.js'
import { h, replace, uid } from '../dom.js'
import { paramsOf } from '../schema.js'

function paramControl (param) {
  const id = uid('param')
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const common = { id, name: param.name, 'aria-describedby': `${hintId} ${errorId}`, 'aria-required': param.optional ? undefined : 'true' }
  let input
  let read
  if (param.type === 'boolean' && !param.optional) {
    input = h('input', { ...common, type: 'checkbox' })
    read = () => input.checked
  } else if (param.type === 'boolean') {
    input = h('select', common, h('option', { value: '' }, '(not set)'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'))
    read = () => input.value === '' ? undefined : input.value === 'true'
  } else if (param.type === 'number' || param.type === 'integer') {
    input = h('input', { ...common, type: 'number', step: param.type === 'integer' ? '1' : 'any' })
    read = () => input.value === '' ? undefined : Number(input.value)
  } else {
    input = h('input', { ...common, type: 'text', autocomplete: 'off' })
    read = () => input.value === '' ? undefined : input.value
  }
  const hint = [param.type, param.optional ? 'optional' : 'required']
  if (param.default !== undefined) hint.push(`default ${JSON.stringify(param.default)}`)
  if (param.description) hint.push(param.description)
  const label = h('label', { for: id }, param.name)
  const mark = param.optional ? h('span', { class: 'optional', 'aria-hidden': 'true' }, ' (optional)') : h('span', { class: 'required', 'aria-hidden': 'true' }, ' *')
  const error = h('p', { id: errorId, class: 'field-error', hidden: true })
  const element = input.type === 'checkbox'
    ? h('div', { class: 'field field-check' }, h('div', { class: 'check-row' }, input, label, mark), h('p', { id: hintId, class: 'hint' }, hint.join(' · ')), error)
    : h('div', { class: 'field' }, label, mark, input, h('p', { id: hintId, class: 'hint' }, hint.join(' · ')), error)
  return {
    param,
    element,
    input,
    read,
    setError (message) {
      error.hidden = message === undefined
      error.textContent = message ?? ''
      if (message === undefined) input.removeAttribute('aria-invalid')
      else input.setAttribute('aria-invalid', 'true')
    }
  }
}

function actionCard (action, can) {
  const headingId = uid('action')
  const controls = paramsOf(action).map(paramControl)
  const output = h('div', { class: 'action-output', role: 'status' })
  const errorBox = h('div', { class: 'form-error', role: 'alert' })
  const run = h('button', { type: 'submit', class: 'button primary', disabled: !can.runActions, title: can.runActions ? undefined : 'Viewers cannot run actions' }, 'Run')
  const form = h('form', { class: 'action-form', novalidate: true },
    controls.length === 0 ? h('p', { class: 'hint' }, 'No parameters.') : controls.map((c) => c.element),
    errorBox,
    h('div', { class: 'form-buttons' }, run))
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (!can.runActions) return
    const body = {}
    for (const c of controls) {
      c.setError(undefined)
      const value = c.read()
      if (value !== undefined) body[c.param.name] = value
    }
    errorBox.textContent = ''
    output.textContent = ''
    run.disabled = true
    form.setAttribute('aria-busy', 'true')
    try {
      const result = await api.post(`/action/${encodeURIComponent(action.name)}`, body)
      replace(output, h('h4', {}, 'Result'), h('pre', { class: 'json' }, JSON.stringify(result, null, 2)))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status === 401) return
      const others = error.rootMessages()
      for (const [name, detail] of error.fieldDetails()) {
        const messages = Array.isArray(detail?._errors) ? detail._errors.join('; ') : typeof detail?.message === 'string' ? detail.message : JSON.stringify(detail)
        const c = controls.find((x) => x.param.name === name)
        if (c) c.setError(messages)
        else others.push(`${name}: ${messages}`)
      }
      replace(errorBox, h('strong', {}, error.status ? `Error ${error.status}: ${error.message}` : error.message),
        others.length > 0 ? h('ul', {}, others.map((o) => h('li', {}, o))) : null)
    } finally {
      run.disabled = !can.runActions
      form.removeAttribute('aria-busy')
    }
  })
  return h('article', { class: 'card action', 'aria-labelledby': headingId },
    h('h3', { id: headingId }, action.name),
    action.description ? h('p', { class: 'hint' }, action.description) : null,
    action.requireAuth ? h('p', { class: 'hint' }, 'Requires a signed-in caller.') : null,
    form,
    output)
}

export function renderActions (root, { settings, can }) {
  const headingId = uid('actions')
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Actions')
  const actions = Array.isArray(settings?.actions) ? settings.actions.filter((a) => typeof a?.name === 'string') : []
  replace(root, h('section', { class: 'view' },
    h('div', { class: 'view-head' }, heading),
    can.runActions ? null : h('p', { class: 'note' }, 'Signed in as viewer: actions can be read, not run.'),
    actions.length === 0 ? h('p', {}, 'The config defines no actions.') : actions.map((a) => actionCard(a, can))))
  return { focus: () => heading.focus() }
}
