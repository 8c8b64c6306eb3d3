// The sign-in form: the service token (superadmin) or an admin password (editor, viewer). A role with
// TOTP on answers a challenge, and the second-factor form takes over (views/second-factor.js).
import { api, ApiError } from '../api.js'
import { h, onSubmit, replace } from '../dom.js'
import { renderSecondFactor } from './second-factor.js'

/** Renders the form into `root`; `onSignedIn(answer)` gets `{ token, role, expiresIn }`. */
export function renderSignIn (root, { appName, message, onSignedIn }) {
  const input = h('input', { id: 'signin-password', type: 'password', name: 'password', autocomplete: 'current-password', required: true, 'aria-describedby': 'signin-error' })
  const error = h('p', { id: 'signin-error', class: 'form-error', role: 'alert' }, message ?? '')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Sign in')
  const form = h('form', { class: 'signin-form', novalidate: true },
    h('label', { for: 'signin-password' }, 'Token or password'),
    input,
    error,
    button)
  replace(root, h('main', { class: 'signin', id: 'main' },
    h('h1', {}, appName ? `${appName} admin` : 'fastbase admin'),
    h('p', { class: 'hint' }, 'Sign in with the service token (superadmin), or the editor or viewer password.'),
    form))
  input.focus()

  onSubmit(form, { input, button, error, emptyMessage: 'Enter the service token or an admin password.' }, async () => {
    try {
      const answer = await api.login(input.value)
      if (answer.mfa_required !== true) return onSignedIn(answer)
      renderSecondFactor(root, { appName, challenge: answer.challenge, onSignedIn, onRestart: (again) => renderSignIn(root, { appName, message: again, onSignedIn }) })
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      // The server's own message says when no service token is configured.
      error.textContent = e.status === 401 && e.message === 'Invalid credentials' ? 'Sign-in failed: that is not the service token or an admin password.' : `Sign-in failed: ${e.message}`
      input.select()
      input.focus()
    }
  })
}
