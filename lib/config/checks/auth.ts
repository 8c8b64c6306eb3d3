// Cross-field checks of auth: the auth and rules extensions of a table, the fields an auth table
// needs, a user-token key, and how external providers are identified.
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import { isObject } from '../../plain.js'
import { each, fieldsOf, hasFieldList, tablesOf, type At } from './common.js'

export function checkExtensions (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    const extensions = each<{ name?: unknown }>(t.item.extensions, `${t.path}.extensions`)
    for (const name of ['rules', 'auth']) {
      const [, ...extra] = extensions.filter((e) => e.item.name === name)
      for (const e of extra) problems.push(`${e.path}.name: only one ${name} extension is allowed per table`)
    }
    const auth = extensions.find((e) => e.item.name === 'auth')
    if (auth !== undefined && hasFieldList(t)) problems.push(...authRequirements(t, auth.path))
    // teenybase accepts an empty jwtSecret (projects without auth tables use one); user tokens need a key.
    if (auth !== undefined && c.jwtSecret === '') problems.push(`jwtSecret: must not be empty: ${t.path} has an auth extension`)
  }
  return problems
}

/** An external-JWT or OAuth provider is known by a name, an issuer, a JWKS URL or a secret (teenybase's rule). */
export function checkProviders (c: DatabaseSettings): string[] {
  const identified = (p: Record<string, unknown>): boolean => ['name', 'issuer', 'jwksUrl', 'secret'].some((k) => p[k] !== undefined)
  return each<Record<string, unknown>>(c.authProviders, 'authProviders')
    .filter((p) => isObject(p.item) && !identified(p.item))
    .map((p) => `${p.path}: needs one of name, issuer, jwksUrl or secret`)
}

function authRequirements (t: At<TableData>, path: string): string[] {
  const usages = new Set(fieldsOf(t).map((f) => f.item.usage))
  const problems: string[] = []
  for (const usage of ['record_uid', 'auth_email', 'auth_password'] as const) {
    if (!usages.has(usage)) problems.push(`${path}: the auth extension needs a field with usage ${usage}`)
  }
  if (t.item.autoSetUid !== true) problems.push(`${path}: the auth extension needs autoSetUid: true on the table`)
  // Sign-up answers the new user's id and every token carries it: an id hidden from callers hides nothing and breaks sign-up.
  const rules = each<{ name?: unknown, fieldRules?: unknown }>(t.item.extensions, `${t.path}.extensions`).find((e) => e.item.name === 'rules')
  for (const uid of fieldsOf(t).filter((f) => f.item.usage === 'record_uid')) {
    const name = uid.item.name
    if (uid.item.noSelect === true) problems.push(`${uid.path}.noSelect: the id of an auth table's users cannot be hidden: sign-up answers it and every token carries it`)
    if (rules !== undefined && typeof name === 'string' && isObject(rules.item.fieldRules) && Object.hasOwn(rules.item.fieldRules, name)) {
      problems.push(`${rules.path}.fieldRules.${name}: the id of an auth table's users cannot have a field rule: sign-up answers it and every token carries it`)
    }
  }
  return problems
}
