// The second step of an admin sign-in for a role with TOTP on: POST /admin/login answered a
// challenge; a code from the authenticator app (or a one-time recovery code) completes it through
// POST /admin/mfa/verify, which answers the admin token.
import { api, ApiError } from '../api.js'
import { h, onSubmit, replace } from '../dom.js'

/** Six to eight digits is an authenticator code; anything else is taken as a recovery code. */
export function factorOf (text) {
  const value = text.trim()
  return /^\d{6,8}$/.test(value) ? { code: value } : { recoveryCode: value }
}

/**
 * Renders the code form into `root`. `onSignedIn(answer)` gets `{ token, role, expiresIn }`;
 * `onRestart(message)` goes back to the password form (the challenge expired or was spent).
 */
export function renderSecondFactor (root, { appName, challenge, onSignedIn, onRestart }) {
  const input = h('input', { id: 'mfa-code', type: 'text', name: 'code', inputmode: 'text', autocomplete: 'one-time-code', required: true, maxlength: '32', 'aria-describedby': 'mfa-hint mfa-error' })
  const error = h('p', { id: 'mfa-error', class: 'form-error', role: 'alert' })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Verify')
  const form = h('form', { class: 'signin-form', novalidate: true },
    h('label', { for: 'mfa-code' }, 'Authentication code'),
    input,
    h('p', { id: 'mfa-hint', class: 'hint' }, 'The 6-digit code from your authenticator app, or one of your recovery codes (each works once).'),
    error,
    button,
    h('button', { type: 'button', class: 'button', onclick: () => onRestart() }, 'Start over'))
  replace(root, h('main', { class: 'signin', id: 'main' },
    h('h1', {}, appName ? `${appName} admin` : 'fastbase admin'),
    h('h2', {}, 'Second factor'),
    h('p', { class: 'hint' }, 'This role has two-factor sign-in on.'),
    form))
  input.focus()

  onSubmit(form, { input, button, error, emptyMessage: 'Enter the code from your authenticator app or a recovery code.', blank: (value) => value.trim() === '' }, async () => {
    try {
      onSignedIn(await api.verifyMfa(challenge, factorOf(input.value)))
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      // Both are FB_ERR_MFA_INVALID; only the message tells a spent or expired challenge, which cannot
      // be retried: back to the password (lib/auth/mfa/mfa-flows.ts).
      if (e.code === 'FB_ERR_MFA_INVALID' && e.message === 'Invalid or expired challenge') return onRestart('The sign-in expired or had too many wrong codes. Sign in again.')
      error.textContent = e.code === 'FB_ERR_MFA_INVALID' ? 'That code is not right (or was already used). Try the current code.' : `Verification failed: ${e.message}`
      input.select()
      input.focus()
    }
  })
}
