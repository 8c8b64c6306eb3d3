// The bundled example's page at `/` (examples/bundled/public/): a visitor signs up or in, lists the blog's
// posts, writes one and sees new ones live, through fastbase/client. Served only when fastbase runs
// the bundled example (`npm start` with no config), never for a project of one's own (decision D130).
// The page imports the built client from `/client/` here, not the panel's copy, which moves or goes
// with the panel's own setting (`panelPrefix`).
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, sep } from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { packageRoot } from '../lib/package.js'
import { lazyRoutes } from '../plugins/lazy-routes.js'

/** Scripts, styles and requests of this origin only: what the page shows can never run as code. */
export const EXAMPLE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': EXAMPLE_PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache'
}

const examplePage: FastifyPluginAsync = async (app) => {
  const page = join(packageRoot, 'examples', 'bundled', 'public')
  const client = join(packageRoot, 'dist', 'lib', 'client')
  const scripts = (name: string): boolean => !name.endsWith('.d.ts') && !name.endsWith('.map')
  // A route per file that exists, so every other path keeps fastbase's 404; the files are served by
  // @fastify/static, loaded on the first visit (plugins/lazy-routes.ts, decision D136).
  for (const dir of [page, client]) if (!existsSync(dir)) app.log.warn(`fastbase: ${dir} is missing, so the example page's files there are not served`)
  const urls = ['/', ...filesIn(page).map((file) => `/${file}`), ...filesIn(client).filter(scripts).map((file) => `/client/${file}`)]
  lazyRoutes(app, urls, async (inner) => {
    const { default: fastifyStatic } = await import('@fastify/static')
    const common = { wildcard: false, cacheControl: false, setHeaders: (res: { setHeader: (name: string, value: string) => void }) => { for (const [name, value] of Object.entries(HEADERS)) res.setHeader(name, value) } }
    await inner.register(fastifyStatic, { ...common, root: page, prefix: '/', index: 'index.html' })
    // One instance, two roots: the first decorates the reply.
    await inner.register(fastifyStatic, { ...common, root: client, prefix: '/client/', index: false, globIgnore: ['**/*.d.ts', '**/*.map'], decorateReply: false })
  })
}

/** The files under `dir`, as URL paths relative to it (none when it is missing). */
function filesIn (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(join(dir, file)).isFile())
    .map((file) => file.split(sep).join('/'))
}

export default examplePage
