// The panel's only way to the server: fastbase/client against the public API, with the admin token.
import { createClient, FastbaseError } from './client/index.js'

/** The API prefix, from index.html's <meta name="fastbase-api"> (routes/panel.ts fills it in). */
export const API_BASE = document.querySelector('meta[name="fastbase-api"]')?.getAttribute('content') || '/api/v1'

/** An error answer of the API: `{ code, message, data }` and its stable code (FB_ERR_*), or a network failure (status 0). */
export class ApiError extends Error {
  constructor (status, message, data, code) {
    super(message)
    this.status = status
    this.data = data
    this.code = code
  }

  /** `[name, detail]` per field of `data`; a validation error's root `_errors` (about the whole body) are not a field. */
  fieldDetails () {
    return Object.entries(this.data ?? {}).filter(([name]) => name !== '_errors')
  }

  /** The messages about the request as a whole: a validation error's root `_errors`. */
  rootMessages () {
    return Array.isArray(this.data?._errors) ? this.data._errors.map(String) : []
  }
}

let token = null
let onUnauthorized = () => {}

/** Sets the bearer token for every later call and what happens when the API answers 401. */
export function useToken (value, unauthorized) {
  token = value
  if (unauthorized) onUnauthorized = unauthorized
}

/** A path under the API prefix with query parameters (undefined, null and '' are left out). */
export function apiUrl (path, query) {
  const url = new URL(API_BASE.replace(/\/$/, '') + path, location.origin)
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value))
  }
  return url.pathname + url.search
}

// Every call goes through fastbase/client (served built at ./client/): the admin token is named per
// call, since it is not a user's session (no refresh token); the client's errors become ApiErrors.
const fb = createClient(location.origin, { prefix: API_BASE, session: 'memory' })

async function send (method, path, { query, json, form, auth = true, raw = false } = {}) {
  const sent = auth && token !== null ? token : undefined
  if (raw) {
    // A download: the Response itself (the client answers JSON).
    let response
    try {
      response = await fetch(apiUrl(path, query), { headers: sent === undefined ? {} : { authorization: `Bearer ${sent}` }, credentials: 'omit', cache: 'no-store' })
    } catch (error) {
      throw new ApiError(0, `The server did not answer (${error.message})`)
    }
    if (response.ok) return response
    const body = await response.json().catch(() => undefined)
    throw failed(new ApiError(response.status, typeof body?.message === 'string' ? body.message : `${response.status} ${response.statusText}`.trim(), body?.data, response.headers.get('fastbase-error-code') ?? undefined), sent)
  }
  try {
    return await fb.request(method, path, { query: present(query), json, form, token: sent })
  } catch (error) {
    if (!(error instanceof FastbaseError)) throw error
    throw failed(new ApiError(error.status, error.message, error.data, error.code), sent)
  }
}

/** A query without its empty values (undefined, null and '' are left out). */
function present (query) {
  return query === undefined ? undefined : Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''))
}

function failed (error, sent) {
  if (error.status === 401 && sent !== undefined) onUnauthorized(error)
  return error
}

export const api = {
  get: (path, query, options) => send('GET', path, { ...options, query }),
  post: (path, json, options) => send('POST', path, { ...options, json }),
  delete: (path) => send('DELETE', path),
  /** Multipart: `form` is a FormData (file uploads, see filePayload in views/record-form.js). */
  postForm: (path, form, query) => send('POST', path, { form, query }),
  /** The raw Response (file downloads). */
  download: (path) => send('GET', path, { raw: true }),
  login: (password) => send('POST', '/admin/login', { json: { password }, auth: false }),
  /** Completes a sign-in that answered a challenge: `factor` is `{ code }` or `{ recoveryCode }`. */
  verifyMfa: (challenge, factor) => send('POST', '/admin/mfa/verify', { json: { challenge, ...factor }, auth: false })
}
