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

/** The smallest size a file field lists in `thumbs` (`WxH`, a 0 side following the other), or undefined. */
export function smallestThumb (thumbs) {
  if (!Array.isArray(thumbs)) return undefined
  const area = (size) => {
    const [w, h] = size.replace(/[tbf]$/, '').split('x').map(Number)
    return (w || h) * (h || w)
  }
  return thumbs.filter((s) => typeof s === 'string' && /^\d+x\d+[tbf]?$/.test(s)).sort((a, b) => area(a) - area(b))[0]
}

/**
 * An <img> of a file's thumbnail, fetched with the admin token (an <img src> sends none) and shown
 * from a blob URL, released once the image has loaded. A file that is no image shows its original;
 * one that fails to load shows nothing but its alt text.
 */
export function thumbnailImage (path, size, name) {
  const img = h('img', { class: 'thumb', alt: name, title: name, loading: 'lazy', decoding: 'async' })
  api.download(`${path}?thumb=${encodeURIComponent(size)}`).then(async (response) => {
    const url = URL.createObjectURL(await response.blob())
    img.addEventListener('load', () => URL.revokeObjectURL(url), { once: true })
    img.addEventListener('error', () => URL.revokeObjectURL(url), { once: true })
    img.src = url
  }, () => {})
  return img
}
