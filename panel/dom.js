// DOM building without HTML strings: every value becomes a text node or a property, never markup.
// API data (record values, error messages, config) is attacker-controlled; nothing here parses HTML.

/** Properties set as DOM properties; everything else is an attribute. */
const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'textContent', 'indeterminate', 'multiple', 'open'])

/**
 * `h('button', { type: 'button', onclick: fn }, 'Save')`. Children: nodes, strings (as text), arrays,
 * null/undefined/false (skipped). Attribute values are strings set with setAttribute.
 */
export function h (tag, props, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = value
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value)
    else if (PROPERTIES.has(key)) el[key] = value
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  append(el, children)
  return el
}

/** Appends children as `h` does. */
export function append (el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

/** Replaces an element's children. */
export function replace (el, ...children) {
  el.replaceChildren()
  return append(el, children)
}

let nextId = 0
/** A document-unique id for label/describedby pairs. */
export function uid (prefix = 'fb') {
  nextId += 1
  return `${prefix}-${nextId}`
}

/** Sets a live region's text (role=status or alert elements announce the change). */
export function announce (el, text) {
  el.textContent = text ?? ''
}

/**
 * Sends `form` through `submit()` once `input` holds something (`blank(value)` says when it does
 * not: `emptyMessage` goes to `error` instead). Meanwhile the button is disabled and the form busy;
 * `error` is cleared first. What `submit` throws, and what it shows, are its own.
 */
export function onSubmit (form, { input, button, error, emptyMessage, blank = (value) => value === '' }, submit) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (blank(input.value)) {
      error.textContent = emptyMessage
      input.focus()
      return
    }
    button.disabled = true
    form.setAttribute('aria-busy', 'true')
    error.textContent = ''
    try {
      await submit()
    } finally {
      button.disabled = false
      form.removeAttribute('aria-busy')
    }
  })
}
