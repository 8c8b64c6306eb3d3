// @fastify/cookie, for the cookies the auth routes set (routes/auth/kit.ts, the OAuth state) and read;
// plugins/auth-context.ts reads the auth cookie with the `cookie` package @fastify/cookie is built on.
// A host app may have registered it already: a second registration in one app is an error, and the
// host's serves fastbase as well.
import fp from 'fastify-plugin'
import fastifyCookie from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'

async function cookie (app: FastifyInstance): Promise<void> {
  if (app.hasDecorator('parseCookie')) return
  // No parsing hook: only the auth cookie is ever read, and only when no Authorization header came.
  await app.register(fastifyCookie, { hook: false })
}

export default fp(cookie, { fastify: '5.x', name: 'fastbase-cookie' })
