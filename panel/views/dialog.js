// Modal dialogs (native <dialog>): focus moves in, stays in, Escape closes, focus returns after.
import { h, uid } from '../dom.js'

/** Opens a modal titled `title` holding `content`; `close()` removes it and returns focus. */
export function openDialog ({ title, content, className, onClose }) {
  const returnTo = document.activeElement
  const titleId = uid('dialog-title')
  const dialog = h('dialog', { class: `dialog ${className ?? ''}`, 'aria-labelledby': titleId },
    h('h2', { id: titleId, class: 'dialog-title' }, title),
    content)
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    if (dialog.open) dialog.close()
    dialog.remove()
    onClose?.()
    // The opener may be gone (its row re-rendered after a save): then the content area takes focus.
    if (returnTo instanceof HTMLElement && returnTo.isConnected) returnTo.focus()
    else document.getElementById('main')?.focus()
  }
  dialog.addEventListener('close', close)
  document.body.append(dialog)
  dialog.showModal()
  const autofocus = dialog.querySelector('[autofocus]') ?? dialog.querySelector('input, select, textarea, button')
  autofocus?.focus()
  return { dialog, close }
}

/** Asks before something that cannot be undone; resolves true only when `confirmLabel` is pressed. */
export function confirmDialog ({ title, message, confirmLabel }) {
  return new Promise((resolve) => {
    let answer = false
    const cancel = h('button', { type: 'button', class: 'button', autofocus: true, onclick: () => close() }, 'Cancel')
    const confirm = h('button', { type: 'button', class: 'button danger', onclick: () => { answer = true; close() } }, confirmLabel)
    const { close } = openDialog({
      title,
      className: 'confirm',
      content: [h('div', { class: 'dialog-body' }, message), h('div', { class: 'dialog-buttons' }, cancel, confirm)],
      onClose: () => resolve(answer)
    })
  })
}
