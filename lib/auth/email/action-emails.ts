// Verification, password-reset and sign-in code emails: the table's template (config `emailTemplates`) rendered
// and handed to the mailer.
import { actionEmail, type ActionEmailKind, type Mailer } from '../mailer.js'
import type { AuthTable } from '../types.js'

export interface ActionEmailSettings {
  appName: string
  appUrl: string
  /** Created on first use: most processes never send mail. */
  mailer: () => Mailer
}

export function actionEmailSender (settings: ActionEmailSettings) {
  return async (at: AuthTable, kind: ActionEmailKind, to: string, token: string, code?: string): Promise<void> => {
    const templates = at.ext.emailTemplates ?? {}
    // teenybase names the reset template `passwordReset`; `resetPassword` is accepted as well.
    const template = kind === 'verification' ? templates.verification : kind === 'otp' ? templates.otp : templates.passwordReset ?? templates.resetPassword
    const message = actionEmail(kind, { appName: settings.appName, appUrl: settings.appUrl, token, email: to, code }, template)
    await settings.mailer().send({ to, ...message })
  }
}
