// The admin panel's static files at /panel/ (the UI itself arrives in a later release).
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'
import { packageRoot } from '../lib/package.js'

const panel: FastifyPluginAsync = async (app) => {
  await app.register(fastifyStatic, {
    root: join(packageRoot, 'panel'),
    // Without the trailing slash @fastify/static adds one and, with `redirect`, sends /panel there.
    prefix: '/panel',
    redirect: true,
    // Other plugins (file downloads) may decorate the reply with sendFile; this one needs none.
    decorateReply: false
  })
}


export default panel
