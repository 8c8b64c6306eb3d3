// What the API document says of one auth table's routes (each route spreads its part into its schema):
// operationIds, the error statuses, examples of the bodies, and the sessions they answer, from the
// table's components (schemas/openapi/components.ts).
import type { FastifySchema } from 'fastify'
import type { TableDescriptor } from '../../lib/table/descriptor.js'
import { body, EXAMPLE_PASSWORD, exampleValue, json, type DocumentComponents } from '../../schemas/openapi/components.js'

type Declared = Pick<FastifySchema, 'operationId' | 'x-document'>

const BODIED = [400, 401, 413, 415, 500, 503]

export function authDocument (b: DocumentComponents, table: TableDescriptor) {
  const view = b.view(table)
  const t = table.name
  const limited = b.rateLimited ? [429] : []
  const fields = view.auth?.fields
  const password = fields?.password?.name ?? 'password'
  const confirm = fields?.confirmName === undefined ? {} : { [fields.confirmName]: EXAMPLE_PASSWORD }
  const session = (description: string) => ({ 200: { description, content: json(b.session(view), { token: 'eyJhbGciOiJIUzI1NiJ9.e30.signature', refresh_token: 'r1Xq9-example-refresh-token', record: b.recordExample(view), aal: 1 }) } })
  // A sign-in that a second factor can stop answers its challenge instead (decision D115).
  const signIn = (description: string) => ({ 200: { description: `${description}, or the challenge of the second factor when the user has TOTP on (complete it with mfa/verify)`, content: json(b.signIn(view), { token: 'eyJhbGciOiJIUzI1NiJ9.e30.signature', refresh_token: 'r1Xq9-example-refresh-token', record: b.recordExample(view), aal: 1 }) } })
  const success = (description: string) => ({ 200: { description, content: { 'application/json': { schema: { type: 'object', required: ['success'], properties: { success: { type: 'boolean' } } }, example: { success: true } } } } })
  const id = (name: string) => `${t}_auth_${name}`
  // Functions: a component exists once a route refers to it.
  return {
    signUp: (): Declared => {
      const name = `${t}.sign-up`
      const insert = b.fields(view, 'insert')
      b.schemas[name] ??= { ...b.schemas[insert.$ref.split('/').pop()], description: `A new \`${t}\` account; keys that name no field are ignored.`, additionalProperties: true }
      return { operationId: id('sign_up'), 'x-document': { errors: [...BODIED, 403, ...limited], requestBody: body(json(b.ref(name), b.writeExample(view, 'insert', 1))), responses: session('The new account\'s session') } }
    },
    loginPassword: (): Declared => ({
      operationId: id('login'),
      'x-document': {
        errors: [...BODIED, ...limited],
        bodyExample: { identity: exampleValue(table, fields?.email ?? fields?.username ?? table.fieldList[0], undefined, 1), password: EXAMPLE_PASSWORD },
        responses: signIn('A new session')
      }
    }),
    refreshToken: (): Declared => ({
      operationId: id('refresh_token'),
      'x-document': { errors: [...BODIED, ...limited], bodyExample: { refresh_token: 'the refresh_token of the last sign-in or refresh' }, responses: session('New tokens (the refresh token is rotated)') }
    }),
    logout: (): Declared => ({ operationId: id('logout'), 'x-document': { errors: [400, 401, 500, 503], responses: success('The session is ended and the auth cookie cleared') } }),
    changePassword: (): Declared => ({
      operationId: id('change_password'),
      'x-document': {
        errors: [...BODIED, ...limited],
        bodyExample: { [password]: EXAMPLE_PASSWORD, ...confirm, ...(fields?.currentName === undefined ? {} : { [fields.currentName]: EXAMPLE_PASSWORD }) },
        responses: success('Changed')
      }
    }),
    requestPasswordReset: (): Declared => ({
      operationId: id('request_password_reset'),
      'x-document': {
        errors: [...BODIED, ...limited],
        ...(fields?.email === undefined ? {} : { bodyExample: { [fields.email.name]: exampleValue(table, fields.email, undefined, 1) } }),
        responses: success('Accepted (sent when the account exists)')
      }
    }),
    confirmPasswordReset: (): Declared => ({
      operationId: id('confirm_password_reset'),
      'x-document': { errors: [...BODIED, ...limited], bodyExample: { token: 'the token from the reset email', [password]: EXAMPLE_PASSWORD, ...confirm }, responses: signIn('A new session (every other session is revoked)') }
    }),
    requestVerification: (): Declared => ({ operationId: id('request_verification'), 'x-document': { errors: [...BODIED, ...limited], responses: success('Sent') } }),
    confirmVerification: (): Declared => ({
      operationId: id('confirm_verification'),
      'x-document': {
        errors: [...BODIED, ...limited],
        bodyExample: { token: 'the token from the verification email' },
        responses: { 200: { description: 'The verified account (with a new session when the caller was not signed in as it)', content: json({ anyOf: [b.session(view), b.mfaChallenge(), { type: 'object', required: ['record'], properties: { record: b.record(view) } }] }) } }
      }
    }),
    loginToken: (): Declared => ({ operationId: id('login_token'), 'x-document': { errors: [400, 401, 403, 500, 503, ...limited], responses: signIn('A session for the external token\'s user (found by verified email, or created)') } }),
    oneTap: (provider: string): Declared => ({
      operationId: id(`${provider}-login`.replace(/[^A-Za-z0-9]+/g, '_')),
      'x-document': { errors: [...BODIED, 403, ...limited], responses: signIn('The session (the auth cookie is set when authCookie is configured)') }
    }),
    oauth: (): Declared => ({
      operationId: id('oauth'),
      'x-document': {
        errors: [400, 401, 404, 500, 502, 503, ...limited],
        responses: {
          302: { description: 'To the provider\'s authorization page (sets the state cookie)', headers: { Location: { description: 'The provider\'s authorization URL', schema: { type: 'string', format: 'uri' } } } },
          // This route never answers 2xx: every other outcome is one of the errors above.
          default: { description: 'Any other error', content: json(b.error()) }
        }
      }
    }),
    oauthCallback: (): Declared => ({
      operationId: id('oauth_callback'),
      'x-document': {
        errors: [400, 401, 403, 404, 500, 502, 503, ...limited],
        responses: {
          ...signIn('The session, when no authCookie is configured'),
          302: { description: 'With authCookie configured: the cookie is set and the browser sent to the flow\'s redirect (with `error` and `error_description` on a refusal, with `mfa_challenge` and no cookie when a second factor is due)', headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } } }
        }
      }
    })
  }
}

/** The API document's part for the email-code and second-factor routes of one auth table. */
export function otpMfaDocument (b: DocumentComponents, table: TableDescriptor) {
  const view = b.view(table)
  const t = table.name
  const limited = b.rateLimited ? [429] : []
  const email = view.auth?.fields.email
  const emailExample = email === undefined ? 'ada@example.com' : exampleValue(table, email, undefined, 1)
  const ok = ok200('Accepted (a code is sent when the address may sign in)')
  const signIn = { 200: { description: 'A new session, or the challenge of the second factor when the user has TOTP on', content: json(b.signIn(view)) } }
  const id = (name: string) => `${t}_auth_${name}`
  return {
    requestOtp: (): Declared => ({ operationId: id('request_otp'), 'x-document': { errors: [...BODIED, ...limited], bodyExample: { email: emailExample }, responses: ok } }),
    loginOtp: (): Declared => ({ operationId: id('login_otp'), 'x-document': { errors: [...BODIED, 403, ...limited], bodyExample: { email: emailExample, code: '123456' }, responses: signIn } }),
    mfaEnroll: (): Declared => ({
      operationId: id('mfa_totp_enroll'),
      'x-document': { errors: [...BODIED, 403, ...limited], responses: { 200: { description: 'A new secret, on once confirmed', content: json(TOTP_ENROLLMENT, { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', uri: 'otpauth://totp/Acme:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme&algorithm=SHA1&digits=6&period=30' }) } } }
    }),
    mfaConfirm: (): Declared => ({
      operationId: id('mfa_totp_confirm'),
      'x-document': { errors: [...BODIED, 403, ...limited], bodyExample: { code: '123456' }, responses: { 200: { description: 'TOTP is on; the recovery codes are shown this once', content: json(RECOVERY_CODES) } } }
    }),
    mfaDisable: (): Declared => ({ operationId: id('mfa_totp_disable'), 'x-document': { errors: [...BODIED, 403, ...limited], bodyExample: { code: '123456' }, responses: ok200('TOTP is off') } }),
    mfaVerify: (): Declared => ({ operationId: id('mfa_verify'), 'x-document': { errors: [...BODIED, ...limited], bodyExample: { challenge: 'the challenge of the sign-in', code: '123456' }, responses: { 200: { description: 'The session, at level 2', content: json(b.session(view)) } } } })
  }
}

export const TOTP_ENROLLMENT = { type: 'object', required: ['secret', 'uri'], properties: { secret: { type: 'string', description: 'Base32 TOTP secret' }, uri: { type: 'string', description: 'otpauth:// URI for an authenticator app (a QR code)' } } }
export const RECOVERY_CODES = { type: 'object', required: ['recovery_codes'], properties: { recovery_codes: { type: 'array', items: { type: 'string' }, description: 'One-time codes, each usable once instead of a TOTP code' } } }
const ok200 = (description: string) => ({ 200: { description, content: json({ type: 'object', required: ['success'], properties: { success: { type: 'boolean' } } }, { success: true }) } })

export type AuthDocument = ReturnType<typeof authDocument>
export type OtpMfaDocument = ReturnType<typeof otpMfaDocument>
