// Which columns of an auth table play which role: found by field `usage` (the scaffold's authFields work as is).
import type { AuthExtension, TableData, TableField } from '../../schemas/config.js'

export interface AuthFields {
  uid: TableField
  username?: TableField
  email?: TableField
  verified?: TableField
  password?: TableField
  salt?: TableField
  name?: TableField
  avatar?: TableField
  meta?: TableField
  /** Fields whose values make up `auth.role` (JWT `aud`). */
  audience: TableField[]
  /** `password` + passwordConfirmSuffix, when a confirm field is required. */
  confirmName?: string
  /** `password` + passwordCurrentSuffix ('Current' by default; '' disables). */
  currentName?: string
}

export function authExtensionOf (table: TableData): AuthExtension | undefined {
  return table.extensions?.find((e): e is AuthExtension => e.name === 'auth')
}

export function authFieldsOf (table: TableData, ext: AuthExtension): AuthFields {
  const by = (usage: string) => table.fields.find((f) => f.usage === usage)
  const password = by('auth_password')
  const currentSuffix = ext.passwordCurrentSuffix ?? 'Current'
  return {
    uid: by('record_uid')!,
    username: by('auth_username'),
    email: by('auth_email'),
    verified: by('auth_email_verified'),
    password,
    salt: by('auth_password_salt'),
    name: by('auth_name'),
    avatar: by('auth_avatar'),
    meta: by('auth_metadata'),
    audience: table.fields.filter((f) => f.usage === 'auth_audience'),
    confirmName: password !== undefined && ext.passwordConfirmSuffix ? `${password.name}${ext.passwordConfirmSuffix}` : undefined,
    currentName: password !== undefined && currentSuffix !== '' ? `${password.name}${currentSuffix}` : undefined
  }
}
