// Downloads that need the admin token (a plain link sends none): fetched, then saved under a name.
import { api, ApiError } from './api.js'
import { h } from './dom.js'

/** Fetches with the token and saves the answer under its stored name (a plain link has no token). */
export async function download (path, name, onError) {
  try {
    const response = await api.download(path)
    const url = URL.createObjectURL(await response.blob())
    const a = h('a', { href: url, download: name, hidden: true })
    document.body.append(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(url), 60_000)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.status !== 401) onError(`Download of ${name} failed: ${error.message}`)
  }
}
