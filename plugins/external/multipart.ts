// @fastify/multipart, for uploads (plugins/files.ts reads the parts with its own limits on each call).
// A host app may have registered it already: a second registration in one app is an error, and the
// host's serves fastbase as well (unless the host set `attachFieldsToBody`, which consumes the parts).
import fp from 'fastify-plugin'
import fastifyMultipart from '@fastify/multipart'
import type { FastifyInstance } from 'fastify'

async function multipart (app: FastifyInstance): Promise<void> {
  if (app.hasRequestDecorator('parts')) return
  await app.register(fastifyMultipart)
}

export default fp(multipart, { fastify: '5.x', name: 'fastbase-multipart' })
