// POST /files/token: a short-lived file token for the signed-in caller (decision D124), for URLs a
// browser fetches without headers (`<img src=".../photo.png?token=...">`).
import { Type } from '@sinclair/typebox'
import { DEFAULT_FILE_TOKEN_DURATION, issueFileToken } from '../lib/auth/tokens/file-tokens.js'
import { callerOf } from '../plugins/auth-context.js'
import { ErrorSchema } from '../schemas/http/error.js'
import type { TypeBoxApp } from './typebox.js'

export function fileTokenRoute (app: TypeBoxApp): void {
  const duration = app.fastbase.config.files?.tokenDuration ?? DEFAULT_FILE_TOKEN_DURATION
  app.post('/files/token', {
    schema: {
      tags: ['files'],
      operationId: 'files_token',
      summary: 'A short-lived token that downloads files as the signed-in caller',
      description: 'For `?token=` on file downloads and thumbnails (a browser sends no Authorization header with `<img src>`). ' +
        'It lives `files.tokenDuration` seconds (default 180), acts only as its user (each download meets the viewRule as that user, now), ' +
        'and ends with the session (logout, password change). Only a signed-in user (with a session) gets one.',
      'x-document': { errors: [401, 500, 503], bodyOptional: true },
      security: [{ bearerAuth: [] }],
      response: { 200: Type.Object({ token: Type.String(), expiresIn: Type.Integer({ description: 'Seconds the token lives' }) }), 401: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => issueFileToken(callerOf(request), app.fastbase.auth.tables, duration))
}
