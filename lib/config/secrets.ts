// `$NAME` references. In a secret position, a string that starts with `$` is replaced by the
// environment variable NAME, so configs can be committed without their secrets; the app's public
// URL may be read the same way (it differs per deployment, and teenybase projects write
// `appUrl: '$APP_URL'`). Only those positions are resolved: elsewhere `$` is ordinary text (e.g.
// teenybase's `jwtIssuer: '$db'`).
// Problems name the config path and the variable, never a value.
import { clonePlain, isPlainObject } from '../plain.js'
import { formatPath } from './paths.js'

export type Env = Record<string, string | undefined>

export interface SecretResolution<T> {
  config: T
  problems: string[]
}

type Segment = string | number
/** `*` matches one key or index; a trailing `**` matches any depth below. */
type Pattern = readonly string[]

const SECRET_POSITIONS: readonly Pattern[] = [
  ['jwtSecret'],
  ['tables', '*', 'extensions', '*', 'jwtSecret'],
  ['email', 'smtp'],
  ['authProviders', '*', 'clientId'],
  // clientId may be a list (every entry an accepted ID-token audience).
  ['authProviders', '*', 'clientId', '*'],
  ['authProviders', '*', 'clientSecret'],
  ['authProviders', '*', 'secret'],
  // The deprecated spelling of authProviders (teenybase merges the two).
  ['jwtAllowedIssuers', '*', 'clientId'],
  ['jwtAllowedIssuers', '*', 'clientId', '*'],
  ['jwtAllowedIssuers', '*', 'clientSecret'],
  ['jwtAllowedIssuers', '*', 'secret'],
  ['storage', '**'],
  ['backups', 'storage', '**'],
  ['metrics', 'token'],
  ['admin', 'viewerPassword'],
  ['admin', 'editorPassword']
]

/** Positions read from the environment that are not secrets: shown as they are by `/settings`. */
const DEPLOYMENT_POSITIONS: readonly Pattern[] = [
  ['appUrl'],
  ['allowedRedirectUrls', '*']
]

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A copy of `input` with every `$NAME` in a secret or deployment position replaced from `env`; the input is not modified. */
export function resolveSecrets<T> (input: T, env: Env, unset?: UnsetSecrets): SecretResolution<T> {
  const problems: string[] = []
  const config = clonePlain(input)
  visitStrings(config, [], (value, path) => {
    if (!value.startsWith('$') || !(isSecretPosition(path) || DEPLOYMENT_POSITIONS.some((p) => matches(p, path)))) return value
    const name = value.slice(1)
    if (!ENV_NAME.test(name)) {
      // Possibly a literal secret that happens to start with `$`: do not echo it.
      problems.push(`${formatPath(path)}: starts with "$" but the rest is not an environment variable name`)
      return value
    }
    const resolved = env[name]
    if ((resolved === undefined || resolved === '') && unset === 'placeholder') return placeholderFor(path)
    if (resolved === undefined || resolved === '') {
      problems.push(`${formatPath(path)}: environment variable ${name} is not set`)
      return value
    }
    return resolved
  })
  return { config: config as T, problems }
}

/**
 * What an unset `$NAME` is: a problem (a start, `fastbase check`), or a placeholder for a command that
 * reads only the config's shape and never uses a secret (`fastbase types`, which CI runs without them).
 */
export type UnsetSecrets = 'problem' | 'placeholder'

/** A stand-in value valid where it stands: a URL for the app's URLs and SMTP, otherwise a long text. */
function placeholderFor (path: readonly Segment[]): string {
  if (DEPLOYMENT_POSITIONS.some((p) => matches(p, path))) return 'http://localhost'
  if (path[0] === 'email') return 'smtp://localhost'
  return 'unset-secret-placeholder-0123456789abcdef'
}

export function isSecretPosition (path: readonly Segment[]): boolean {
  return SECRET_POSITIONS.some((pattern) => matches(pattern, path))
}

function matches (pattern: Pattern, path: readonly Segment[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '**') return path.length > i
    if (i >= path.length) return false
    if (pattern[i] !== '*' && pattern[i] !== path[i]) return false
  }
  return pattern.length === path.length
}

/**
 * Replaces, in place, each string inside arrays and plain objects with `replace(value, path)`.
 * Only those are copied by `clonePlain`, so nothing belonging to the caller is touched.
 */
function visitStrings (node: unknown, path: Segment[], replace: (value: string, path: Segment[]) => string): void {
  if (Array.isArray(node)) {
    node.forEach((child, i) => {
      if (typeof child === 'string') node[i] = replace(child, [...path, i])
      else visitStrings(child, [...path, i], replace)
    })
  } else if (isPlainObject(node)) {
    for (const [key, child] of Object.entries(node)) {
      if (typeof child === 'string') node[key] = replace(child, [...path, key])
      else visitStrings(child, [...path, key], replace)
    }
  }
}
