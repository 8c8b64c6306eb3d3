// Outgoing email (decision D17): nodemailer over SMTP when a URL is configured, otherwise every
// message is written as an .eml file to an outbox folder so that verification and reset flows
// work locally without a mail server. Also the action-link emails and their templates, written in
// teenybase's template syntax.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import type Nodemailer from 'nodemailer'

export interface MailMessage { to: string, subject: string, text: string, html: string }
export interface SendResult { messageId: string, file?: string }

export interface Mailer {
  send (msg: MailMessage): Promise<SendResult>
  close (): void
  readonly mode: 'smtp' | 'outbox'
}

export interface MailerOptions {
  /** `smtp://user:pass@host:port` or `smtps://...`; absent or empty means outbox mode. */
  smtpUrl?: string
  outboxDir: string
  from: string
  log: { info (obj: object, msg: string): void }
}

// Loaded with the first mailer (the first email): most processes never send one, and nodemailer
// is one of the larger modules fastbase uses.
const nodemailer = (): typeof Nodemailer => createRequire(import.meta.url)('nodemailer') as typeof Nodemailer

export function createMailer (opts: MailerOptions): Mailer {
  return opts.smtpUrl ? smtpMailer(opts, opts.smtpUrl) : outboxMailer(opts)
}

// Logs name the recipient only: bodies carry one-time tokens, and subjects may too (the sign-in
// code email's default subject is its code; any template may put {{TOKEN}} or {{CODE}} there).
function smtpMailer (opts: MailerOptions, smtpUrl: string): Mailer {
  const transport = nodemailer().createTransport(smtpUrl)
  return {
    mode: 'smtp',
    async send (msg) {
      const info = await transport.sendMail({ from: opts.from, ...msg })
      opts.log.info({ to: msg.to, messageId: info.messageId }, 'email sent')
      return { messageId: info.messageId }
    },
    close () { transport.close() }
  }
}

function outboxMailer (opts: MailerOptions): Mailer {
  const transport = nodemailer().createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    mode: 'outbox',
    async send (msg) {
      const info = await transport.sendMail({ from: opts.from, ...msg })
      if (!Buffer.isBuffer(info.message)) throw new Error('nodemailer stream transport did not return a buffer')
      const file = await writeOutboxFile(opts.outboxDir, info.message)
      opts.log.info({ to: msg.to, file }, 'email written to outbox')
      return { messageId: info.messageId, file }
    },
    close () { transport.close() }
  }
}

/** `<dir>/<ISO timestamp>-<random>.eml`, readable by the owner only (it holds live tokens). */
async function writeOutboxFile (dir: string, message: Buffer): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  // ':' and '.' are not allowed in Windows file names; the name still sorts by time.
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const file = join(dir, `${stamp}-${randomBytes(6).toString('hex')}.eml`)
  await writeFile(file, message, { mode: 0o600, flag: 'wx' })
  return file
}

// ---- templates ----------------------------------------------------------------------------

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

export function escapeHtml (s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

const PLACEHOLDER = /\{\{(.*?)\}\}/g

/**
 * Replaces each `{{ key }}` / `{{ key | default }}` through `lookup`. A falsy or missing value
 * takes the default (the text after the first `|`, trimmed; '' when there is none). One pass
 * only: substituted values are never scanned again, so a value cannot inject placeholders.
 */
function substitute (template: string, lookup: (key: string) => string | undefined): string {
  return template.replace(PLACEHOLDER, (_match, inner: string) => {
    const bar = inner.indexOf('|')
    const key = (bar < 0 ? inner : inner.slice(0, bar)).trim()
    const fallback = bar < 0 ? '' : inner.slice(bar + 1).trim()
    return lookup(key) || fallback
  })
}

const own = (vars: Record<string, string>, key: string): string | undefined =>
  Object.hasOwn(vars, key) ? vars[key] : undefined

/**
 * teenybase template syntax. With `escape`, substituted values are HTML-escaped (for
 * HTML templates); defaults are template text and stay as written.
 */
export function renderTemplate (template: string, vars: Record<string, string>, options: { escape?: boolean } = {}): string {
  return substitute(template, (key) => {
    const value = own(vars, key)
    return value && options.escape ? escapeHtml(value) : value
  })
}

// ---- action-link emails -------------------------------------------------------------------

export type ActionEmailKind = 'verification' | 'passwordReset' | 'otp'

export interface ActionEmailVars {
  appName: string
  appUrl: string
  token: string
  email: string
  /** The sign-in code of an `otp` email (`{{CODE}}`). */
  code?: string
  /** Config `email.variables` (company_name, support_email, ...): usable in templates. */
  variables?: Record<string, string>
}

export interface ActionEmailTemplate {
  subject?: string
  text?: string
  html?: string
  /**
   * Wraps the default body, which it receives as `{{EMAIL_CONTENT}}`. A list is teenybase's stack
   * of layouts: each one's `{{EMAIL_CONTENT}}` is the next one.
   */
  layoutHtml?: string | string[]
  /** Per-template variables; they override config variables and the per-email defaults. */
  variables?: Record<string, string>
}

export interface RenderedEmail { subject: string, text: string, html: string }

// teenybase's per-email defaults, kept under the same names so teenybase templates keep working.
const KIND_DEFAULTS: Record<ActionEmailKind, { path: string, subject: string, vars: Record<string, string> }> = {
  verification: {
    path: 'verify-email',
    subject: 'Verify your {{APP_NAME}} email',
    vars: {
      message_title: 'Email Verification',
      message_description: 'Thank you for joining us at {{APP_NAME}}. Click the button below to verify your email address.',
      message_footer: 'If you did not request this, please ignore this email.',
      action_text: 'Verify Email'
    }
  },
  passwordReset: {
    path: 'reset-password',
    subject: 'Reset your {{APP_NAME}} password',
    vars: {
      message_title: 'Password Reset',
      message_description: 'Click the button below to reset the password for your {{APP_NAME}} account.',
      message_footer: 'If you did not request this, you can safely ignore this email.',
      action_text: 'Reset Password'
    }
  },
  otp: {
    path: 'login-otp',
    subject: 'Your {{APP_NAME}} sign-in code: {{CODE}}',
    vars: {
      message_title: 'Sign in',
      message_description: 'Your {{APP_NAME}} sign-in code is {{CODE}}. Enter it where you asked for it, or click the button below. It works once, for a few minutes.',
      message_footer: 'If you did not ask to sign in, you can safely ignore this email.',
      action_text: 'Sign In'
    }
  }
}

const DEFAULT_TEXT = `{{message_title}}

{{message_description}}

{{action_text}}: {{ACTION_LINK}}

{{message_footer}}
`

const DEFAULT_BODY_HTML = `<h1 style="margin:0 0 16px;font-size:22px;font-weight:600;color:#111111">{{message_title}}</h1>
<p style="margin:0 0 24px">{{message_description}}</p>
<p style="margin:0 0 24px;text-align:center"><a href="{{ACTION_LINK}}" style="display:inline-block;padding:12px 24px;border-radius:6px;background:{{action_button_color | #0074d4}};color:{{action_text_color | #ffffff}};font-weight:600;text-decoration:none">{{action_text | Click Here}}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#555555">If the button does not work, copy this link into your browser:<br><a href="{{ACTION_LINK}}" style="color:#0074d4;word-break:break-all">{{ACTION_LINK}}</a></p>
<p style="margin:0;font-size:13px;color:#777777">{{message_footer}}</p>`

const DEFAULT_LAYOUT_HTML = `<!doctype html>
<html>
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{APP_NAME}}</title></head>
<body style="margin:0;padding:24px 12px;background:#f4f5f7;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#222222">
<div style="max-width:560px;margin:0 auto;padding:32px;border-radius:8px;background:#ffffff">
{{EMAIL_CONTENT}}
</div>
<p style="margin:16px 0 0;text-align:center;font-size:12px;color:#999999">{{APP_NAME}}</p>
</body>
</html>
`

/**
 * The link the email's button opens: `<appUrl>/verify-email/<token>` (or `reset-password`, `login-otp`), or the
 * template's `action_link` as teenybase reads it (`{{APP_URL}}/#/verify/{{TOKEN}}`: an app whose
 * pages live on other routes), its values URL-encoded. A config-wide `email.variables.action_link`
 * does not move it, as in teenybase (the per-email default comes after it).
 */
function actionLink (kind: ActionEmailKind, appUrl: string, vars: ActionEmailVars, authored: string | undefined): string {
  const token = encodeURIComponent(vars.token)
  if (authored === undefined) return `${appUrl}/${KIND_DEFAULTS[kind].path}/${token}`
  return renderTemplate(authored, { APP_URL: appUrl, APP_NAME: encodeURIComponent(vars.appName), TOKEN: token, EMAIL: encodeURIComponent(vars.email) })
}

/** The variables a template sees; the fixed ones (APP_NAME, TOKEN, ...) cannot be overridden. */
function actionVariables (kind: ActionEmailKind, vars: ActionEmailVars, template: ActionEmailTemplate): Record<string, string> {
  const appUrl = vars.appUrl.replace(/\/+$/, '')
  const link = actionLink(kind, appUrl, vars, template.variables?.action_link)
  const fixed = { APP_NAME: vars.appName, APP_URL: appUrl, TOKEN: vars.token, EMAIL: vars.email, CODE: vars.code ?? '', ACTION_LINK: link, action_link: link }
  // Author-written values may mention the fixed ones ("Welcome to {{APP_NAME}}"): expand them
  // once here, so the final render can stay single-pass and user data is never re-scanned.
  const authored = { ...vars.variables, ...KIND_DEFAULTS[kind].vars, ...template.variables }
  const expanded = Object.fromEntries(Object.entries(authored).map(([k, v]) => [k, renderTemplate(String(v), fixed)]))
  return { ...expanded, ...fixed }
}

const CONTENT_SLOT = '{{EMAIL_CONTENT}}'

/** One layout from a stack: the outermost first, each slot filled with the next (no template syntax is read). */
function stacked (layout: string | string[] | undefined): string | undefined {
  if (!Array.isArray(layout)) return layout
  return layout.length === 0 ? undefined : layout.reduceRight((inner, outer) => outer.split(CONTENT_SLOT).join(inner))
}

function renderHtml (vars: Record<string, string>, template: ActionEmailTemplate): string {
  const outer = template.html ?? stacked(template.layoutHtml) ?? DEFAULT_LAYOUT_HTML
  const content = renderTemplate(DEFAULT_BODY_HTML, vars, { escape: true })
  // EMAIL_CONTENT is already HTML: inserted as is, every other value escaped.
  return substitute(outer, (key) => {
    if (key === 'EMAIL_CONTENT') return content
    const value = own(vars, key)
    return value && escapeHtml(value)
  })
}

/** Subject, plain text and HTML of a verification, password-reset or sign-in code email. */
export function actionEmail (kind: ActionEmailKind, vars: ActionEmailVars, template: ActionEmailTemplate = {}): RenderedEmail {
  const all = actionVariables(kind, vars, template)
  return {
    subject: renderTemplate(template.subject ?? KIND_DEFAULTS[kind].subject, all),
    text: renderTemplate(template.text ?? DEFAULT_TEXT, all),
    html: renderHtml(all, template)
  }
}
