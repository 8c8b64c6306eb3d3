// Renders and sends a verification or reset email with the table's templates (config `emailTemplates`).
import type { FastifyInstance } from 'fastify'
import type { AuthTable } from '../../plugins/auth.js'
import { actionEmail, type ActionEmailKind } from '../../lib/auth/mailer.js'

export async function sendActionEmail (app: FastifyInstance, at: AuthTable, kind: ActionEmailKind, to: string, token: string): Promise<void> {
  const { config } = app.fastbase
  const templates = at.ext.emailTemplates ?? {}
  // teenybase names the reset template `passwordReset`; `resetPassword` is accepted as well.
  const template = kind === 'verification' ? templates.verification : templates.passwordReset ?? templates.resetPassword
  const message = actionEmail(kind, { appName: config.appName ?? 'fastbase', appUrl: config.appUrl, token, email: to }, template)
  await app.fastbase.auth.mailer().send({ to, ...message })
}
