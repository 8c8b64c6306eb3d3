// The panel's only way to the server: fetch against the public API with the admin token.

/** The API prefix, from index.html's <meta name="fastbase-api"> (routes/panel.ts fills it in). */
export const API_BASE = document.querySelector('meta[name="fastbase-api"]')?.getAttribute('content') || '/api/v1'

/** An error answer of the API: `{ code, message, data }`, or a network failure (status 0). */
export class ApiError extends Error {
  constructor (status, message, data) {
    super(message)
    this.status = status
    this.data = data
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

async function send (method, path, { query, json, form, auth = true, raw = false } = {}) {
  const headers = {}
  if (auth && token !== null) headers.authorization = `Bearer ${token}`
  let body
  if (form !== undefined) body = form
  else if (json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(json)
  }
  let response
  try {
    // No cookies: the admin token is the only credential (a stale user cookie would make the sign-in a 401).
    response = await fetch(apiUrl(path, query), { method, headers, body, credentials: 'omit', cache: 'no-store' })
  } catch (error) {
    throw new ApiError(0, `The server did not answer (${error.message})`)
  }
  if (response.ok && raw) return response
  const text = await response.text()
  let parsed
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (response.ok) return parsed
  const message = typeof parsed?.message === 'string' ? parsed.message : `${response.status} ${response.statusText}`.trim()
  const error = new ApiError(response.status, message, parsed?.data)
  if (response.status === 401 && auth && token !== null) onUnauthorized(error)
  throw error
}

export const api = {
  get: (path, query, options) => send('GET', path, { ...options, query }),
  post: (path, json, options) => send('POST', path, { ...options, json }),
  delete: (path) => send('DELETE', path),
  /** Multipart: `form` is a FormData (file uploads, see filePayload in views/record-form.js). */
  postForm: (path, form, query) => send('POST', path, { form, query }),
  /** The raw Response (file downloads). */
  download: (path) => send('GET', path, { raw: true }),
  login: (password) => send('POST', '/admin/login', { json: { password }, auth: false })
}
