// The admin session: the token from POST /admin/login, its role and when it expires.
// Kept in sessionStorage: it survives a reload of the tab but not closing it, and other tabs and
// windows never see it. An admin token is powerful (a superadmin's can drop tables), so it should
// not outlive the tab it was typed into the way localStorage would let it.
// Keyed by the API prefix: two fastbase instances on one origin (a host app embedding both) have a
// panel each, and a tab that opens both must keep their sessions apart (each token is for its own API).

import { API_BASE } from './api.js'

const KEY = `fastbase-panel-session:${API_BASE}`

/** `{ token, role, expiresAt }` when a live session is stored, else null (an expired one is removed). */
export function loadSession () {
  let session = null
  try {
    session = JSON.parse(sessionStorage.getItem(KEY) ?? 'null')
  } catch {
    session = null
  }
  if (session !== null && typeof session.token === 'string' && typeof session.role === 'string' &&
      typeof session.expiresAt === 'number' && session.expiresAt > Date.now()) return session
  clearSession()
  return null
}

/** Stores the answer of POST /admin/login; expiresIn is in seconds. */
export function saveSession ({ token, role, expiresIn }) {
  const session = { token, role, expiresAt: Date.now() + expiresIn * 1000 }
  sessionStorage.setItem(KEY, JSON.stringify(session))
  return session
}

export function clearSession () {
  sessionStorage.removeItem(KEY)
}

/** What a role may do (the server enforces the same: lib/auth, routes/tables, routes/admin). */
export function permissions (role) {
  return {
    write: role === 'editor' || role === 'superadmin',
    runActions: role === 'editor' || role === 'superadmin',
    migrate: role === 'superadmin',
    manageFactors: role === 'superadmin'
  }
}
