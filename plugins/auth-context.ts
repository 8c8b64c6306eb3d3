// Sets request.auth for every request: who the caller is, as rules see it.
import fp from 'fastify-plugin'
import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ANONYMOUS, adminContext, type AuthContext } from '../lib/auth-context.js'
import { errors } from '../lib/errors.js'

/** Constant-time comparison of secrets of any length (hashing first equalises the lengths). */
export function secretEquals (a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest()
  return timingSafeEqual(digest(a), digest(b))
}

/** The token from `Authorization: Bearer <t>` or the legacy raw `Authorization: <t>`. */
function bearerToken (request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (header === undefined || header.trim() === '') return undefined
  const match = /^Bearer\s+(.+)$/i.exec(header.trim())
  return match !== null ? match[1].trim() : header.trim()
}

async function authContext (app: FastifyInstance): Promise<void> {
  const serviceToken = app.fastbase.options.adminServiceToken
  app.decorateRequest('auth', null as unknown as AuthContext)
  app.addHook('onRequest', async (request) => {
    request.auth = ANONYMOUS
    const token = bearerToken(request)
    if (token === undefined) return
    if (serviceToken !== undefined && secretEquals(token, serviceToken)) {
      request.auth = adminContext('superadmin')
      return
    }
    // User and admin JWTs arrive with the auth issue; until then any other token is invalid (DECISIONS 12).
    throw errors.invalidToken()
  })
}

export default fp(authContext, { name: 'fastbase-auth-context', dependencies: ['fastbase-config'] })
