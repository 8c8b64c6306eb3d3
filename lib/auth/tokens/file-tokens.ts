// File tokens (decision D124): short-lived tokens a signed-in user puts in a URL (`?token=`), so an
// `<img src>` can show a protected file though a browser sends no Authorization header with it.
// Signed with a key of their own per auth table, so a file token is never an access token and an
// access token is never a file token. It names the user and the session: at each download the
// session is checked (a logout or password change ends it) and the caller it gives meets the
// viewRule like any other; a token never widens what its user may see.
import type { AuthContext } from '../../auth-context.js'
import { unverifiedClaims } from './token-claims.js'
import type { AuthTable } from '../types.js'
import { userContext } from '../sessions/user-context.js'
import type { Executor } from '../../crud/context.js'
import { errors } from '../../errors.js'

/** Seconds a file token lives unless `files.tokenDuration` says otherwise. */
export const DEFAULT_FILE_TOKEN_DURATION = 180

/** What the key of a table's file tokens is derived from besides the table's own secret. */
export const FILE_TOKEN_KEY_SUFFIX = ':fastbase-file-token'

/** A file token for a signed-in user; 401 for anyone else (admins and server code have no session to bind it to). */
export function issueFileToken (caller: AuthContext, tables: ReadonlyMap<string, AuthTable>, duration: number): { token: string, expiresIn: number } {
  const at = caller.cid === null ? undefined : tables.get(caller.cid)
  if (at === undefined || caller.admin || caller.uid === null || caller.sid === null) throw errors.unauthorized('A file token is issued to a signed-in user')
  return { token: at.fileKey.sign({ cid: at.table.name, id: caller.uid, sid: caller.sid }, duration), expiresIn: duration }
}

/**
 * The caller a file token stands for, its session checked now. `current` is the caller the
 * request's own credentials prove: when they are someone's, they must be the token's user.
 */
export async function fileTokenCaller (executor: Executor, tables: ReadonlyMap<string, AuthTable>, token: string, current: AuthContext): Promise<AuthContext> {
  // Only to pick the key; nothing is trusted until that key has verified the token.
  const cid = unverifiedClaims(token)?.cid
  const at = typeof cid === 'string' ? tables.get(cid) : undefined
  if (at === undefined) throw errors.fileToken()
  let claims: Record<string, unknown>
  try {
    claims = at.fileKey.verify(token)
  } catch {
    throw errors.fileToken()
  }
  if (claims.cid !== at.table.name) throw errors.fileToken()
  const caller = await userContext(executor, at, claims)
  if (caller === undefined) throw errors.fileToken()
  const anonymous = current.uid === null && !current.admin
  if (!anonymous && (current.admin || current.cid !== caller.cid || current.uid !== caller.uid)) throw errors.fileToken()
  return caller
}
