// The admin panel at /panel/: static ES modules and CSS from `panel/` (no build step), talking to the
// public API with an admin token. Every answer here carries a strict Content-Security-Policy: scripts,
// styles and requests come from this origin only, so API data rendered by the panel can never run
// as code even if a rendering bug let it through.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { packageRoot } from '../lib/package.js'
import { lazyRoutes } from '../plugins/lazy-routes.js'

export interface PanelOptions {
  /** Where the panel is served (default `/panel`). */
  path?: string
  /** The API's URL prefix, which the panel calls (default `/api/v1`). */
  apiPrefix?: string
}

/** `blob:` for downloads the panel fetches with its token; `data:` for the inline SVG favicon. */
export const PANEL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': PANEL_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // Files have no hashed names (no build step): revalidate each time (ETag / Last-Modified answer 304).
  'Cache-Control': 'no-cache'
}

const panel: FastifyPluginAsync<PanelOptions> = async (app, opts) => {
  const root = join(packageRoot, 'panel')
  const apiPrefix = opts.apiPrefix ?? '/api/v1'
  const path = (opts.path ?? '/panel').replace(/\/+$/, '')
  // index.html names the API prefix in a <meta> element; it is read once and filled in here.
  const index = readFileSync(join(root, 'index.html'), 'utf8')
    .replace('<meta name="fastbase-api" content="/api/v1">', `<meta name="fastbase-api" content="${apiPrefix.replace(/[^\w/.-]/g, '')}">`)

  // The files, by @fastify/static, loaded on the panel's first visit (plugins/lazy-routes.ts, decision D136).
  lazyRoutes(app, [path, `${path}/*`], async (inner) => {
    const { default: fastifyStatic } = await import('@fastify/static')
    const setHeaders = (res: { setHeader: (name: string, value: string) => void }): void => { for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value) }
    // Without the trailing slash @fastify/static adds one and, with `redirect`, sends /panel there.
    await inner.register(fastifyStatic, { root, prefix: path, redirect: true, index: false, cacheControl: false, setHeaders })
    // The built fastbase/client, which the panel's own calls go through (panel/api.js).
    await inner.register(fastifyStatic, {
      root: join(packageRoot, 'dist', 'lib', 'client'),
      prefix: `${path}/client`,
      index: false,
      cacheControl: false,
      allowedPath: (file) => file.endsWith('.js'),
      setHeaders,
      // One instance, two roots: the first decorates the reply.
      decorateReply: false
    })
  })
  app.get(`${path}/`, { schema: { hide: true } }, async (_request, reply) => {
    return await reply.headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(index)
  })
  // The interface lists the panel under the API's base URL (`<base>/panel/`): callers who follow it
  // are sent here (302, since the panel's prefix is a setting and may change).
  const listed = `${apiPrefix.replace(/\/+$/, '')}/panel`
  if (listed !== path) {
    const here = `${app.prefix}${path}/`
    for (const url of [listed, `${listed}/`]) app.get(url, { schema: { hide: true } }, async (_request, reply) => await reply.redirect(here))
  }
}

export default panel
