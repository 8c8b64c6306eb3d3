// "Two-factor sign-in": a superadmin turns TOTP on or off for an admin role (POST /admin/mfa/totp/
// enroll, confirm, disable; decision D118). Enrolling shows the otpauth:// URI and the secret as text:
// a QR code would need an encoder the panel does not have, and it adds no dependency (decision D128).
// The recovery codes are shown once, after the confirmation.
import { api, ApiError } from '../api.js'
import { announce, h, replace, uid } from '../dom.js'
import { factorOf } from './second-factor.js'

const ROLES = ['superadmin', 'editor', 'viewer']

/** A labelled text input for a code; answers `[label, input]`. */
function codeField (label, hint) {
  const id = uid('code')
  const hintId = `${id}-hint`
  const input = h('input', { id, type: 'text', autocomplete: 'one-time-code', maxlength: '32', required: true, 'aria-describedby': hintId })
  return [h('label', { for: id }, label), input, h('p', { id: hintId, class: 'hint' }, hint)]
}

export function renderTwoFactor (root, { can }) {
  const headingId = uid('two-factor')
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Two-factor sign-in')
  if (!can.manageFactors) {
    replace(root, h('section', { class: 'view', 'aria-labelledby': headingId }, heading,
      h('p', {}, 'Only the superadmin turns two-factor sign-in on or off for the admin roles.')))
    return { focus: () => heading.focus() }
  }
  const roleId = uid('role')
  const role = h('select', { id: roleId }, ROLES.map((r) => h('option', { value: r }, r)))
  const alert = h('div', { class: 'alert', role: 'alert' })
  const status = h('p', { class: 'status', role: 'status' })
  const enrolment = h('div', {})

  const fail = (what) => (error) => {
    if (!(error instanceof ApiError)) throw error
    if (error.status !== 401) announce(alert, `${what}: ${error.message}`)
  }

  const start = h('button', { type: 'button', class: 'button primary' }, 'Turn on')
  start.addEventListener('click', async () => {
    announce(alert, '')
    announce(status, '')
    const chosen = role.value
    try {
      showEnrolment(chosen, await api.post('/admin/mfa/totp/enroll', { role: chosen }))
    } catch (error) {
      fail('Could not start')(error)
    }
  })

  function showEnrolment (chosen, { secret, uri }) {
    const [label, input, hint] = codeField('Code from the app', 'The 6-digit code the app shows now: it turns two-factor sign-in on.')
    const confirm = h('form', { class: 'signin-form', novalidate: true }, label, input, hint, h('button', { type: 'submit', class: 'button primary' }, 'Confirm'))
    replace(enrolment, h('div', { class: 'card' },
      h('h3', {}, `Add ${chosen} to your authenticator app`),
      h('p', { class: 'hint' }, 'No QR code here: paste this otpauth:// URI into the app, or type the secret by hand.'),
      h('p', {}, 'URI: ', h('code', { class: 'mfa-uri' }, uri)),
      h('p', {}, 'Secret: ', h('code', { class: 'mfa-secret' }, secret)),
      confirm))
    input.focus()
    confirm.addEventListener('submit', async (event) => {
      event.preventDefault()
      announce(alert, '')
      try {
        const { recovery_codes: codes } = await api.post('/admin/mfa/totp/confirm', { role: chosen, code: input.value.trim() })
        replace(enrolment, h('div', { class: 'card' },
          h('h3', {}, 'Recovery codes'),
          h('p', {}, `Two-factor sign-in is on for ${chosen}. Keep these codes somewhere safe: each signs in once without the app, and they are not shown again.`),
          h('ul', { class: 'recovery-codes', 'aria-label': 'Recovery codes' }, codes.map((c) => h('li', {}, h('code', {}, c))))))
        announce(status, `Two-factor sign-in is on for ${chosen}.`)
      } catch (error) {
        fail('Could not confirm')(error)
        input.select()
      }
    })
  }

  const [offLabel, offInput, offHint] = codeField('Code or recovery code', 'A current code from the app, or a recovery code, of the role above.')
  const off = h('form', { class: 'signin-form', novalidate: true }, offLabel, offInput, offHint, h('button', { type: 'submit', class: 'button' }, 'Turn off'))
  off.addEventListener('submit', async (event) => {
    event.preventDefault()
    announce(alert, '')
    announce(status, '')
    try {
      await api.post('/admin/mfa/totp/disable', { role: role.value, ...factorOf(offInput.value) })
      offInput.value = ''
      replace(enrolment)
      announce(status, `Two-factor sign-in is off for ${role.value}.`)
    } catch (error) {
      fail('Could not turn it off')(error)
    }
  })

  replace(root, h('section', { class: 'view', 'aria-labelledby': headingId },
    h('div', { class: 'view-head' }, heading),
    h('p', { class: 'hint' }, 'A role with it on signs in with its password and then a code from an authenticator app (TOTP).'),
    alert, status,
    h('p', {}, h('label', { for: roleId }, 'Role '), role),
    h('h3', {}, 'Turn on'), start, enrolment,
    h('h3', {}, 'Turn off'), off))
  return { focus: () => heading.focus() }
}
