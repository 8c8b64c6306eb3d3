// The admin panel's static files at /panel/ (the UI itself arrives in a later release).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'

const panel: FastifyPluginAsync = async (app) => {
  await app.register(fastifyStatic, {
    root: join(packageRoot(), 'panel'),
    // Without the trailing slash @fastify/static adds one and, with `redirect`, sends /panel there.
    prefix: '/panel',
    redirect: true,
    // Other plugins (file downloads) may decorate the reply with sendFile; this one needs none.
    decorateReply: false
  })
}

/** The directory holding package.json: this file runs from source (tests) and from dist/. */
function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('fastbase: package.json not found above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}

export default panel
