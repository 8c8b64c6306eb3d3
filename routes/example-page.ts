// The bundled example's page at `/` (example/public/): a visitor signs up or in, lists the blog's
// posts, writes one and sees new ones live, through fastbase/client. Served only when fastbase runs
// the bundled example (`npm start` with no config), never for a project of one's own (decision D130).
// The page imports the built client from `/client/` here, not the panel's copy, which moves or goes
// with the panel's own setting (`panelPrefix`).
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'
import { packageRoot } from '../lib/package.js'

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
  // `wildcard: false`: a route per file that exists, so every other path keeps fastbase's 404.
  const common = { wildcard: false, cacheControl: false, decorateReply: false, setHeaders: (res: { setHeader: (name: string, value: string) => void }) => { for (const [name, value] of Object.entries(HEADERS)) res.setHeader(name, value) } }
  await app.register(fastifyStatic, { ...common, root: join(packageRoot, 'example', 'public'), prefix: '/', index: 'index.html' })
  await app.register(fastifyStatic, { ...common, root: join(packageRoot, 'dist', 'lib', 'client'), prefix: '/client/', index: false, globIgnore: ['**/*.d.ts', '**/*.map'] })
}

export default examplePage
