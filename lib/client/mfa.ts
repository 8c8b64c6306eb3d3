// fb.auth.mfa: the signed-in user's TOTP second factor (docs/auth.md, "Second factor"): enrol, confirm
// with a code from the authenticator app, disable. Signing in with it is fb.auth.verifyMfa.
import type { Core } from './core.js'

/** What disable needs: a current code, an unused recovery code, or the password. */
export type MfaDisableProof = { code: string } | { recoveryCode: string } | { password: string }
export interface TotpEnrollment {
  /** The base32 secret, for typing into the authenticator app. */
  secret: string
  /** The otpauth:// URI to show as a QR code. */
  uri: string
}

export class Mfa {
  constructor (private readonly core: Core, private readonly path: (route: string) => string) {}

  /** A new secret (not on until confirmed; a factor already on is refused). */
  async enroll (): Promise<TotpEnrollment> {
    return await this.core.call('POST', this.path('mfa/totp/enroll'), { json: {} })
  }

  /**
   * Turns TOTP on with a current code; answers the recovery codes (shown this once, each works once).
   * The user's other sessions end; this one is raised to assurance level 2.
   */
  async confirm (code: string): Promise<string[]> {
    const answer = await this.core.call('POST', this.path('mfa/totp/confirm'), { json: { code } })
    return Array.isArray(answer?.recovery_codes) ? answer.recovery_codes.map(String) : []
  }

  async disable (proof: MfaDisableProof): Promise<void> {
    await this.core.call('POST', this.path('mfa/totp/disable'), { json: proof })
  }
}
