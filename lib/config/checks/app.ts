// The app's own public URL: email links, OAuth callbacks and redirect checks are built from it, so a
// value that is not an absolute http(s) URL (an unresolved `$APP_URL`, a bare host name) is a config
// problem reported with the others, not a TypeError at the first request that reads it.
import { allowedEntryProblem } from '../../auth/oauth/redirects.js'
import type { Check } from './common.js'

const WHY = '(email links, OAuth callbacks and the origin cookie-authenticated writes come from are built from it)'

export const checkAppUrl: Check = (config) => {
  // An unresolved `$NAME` is reported by the secret resolver, naming the variable.
  if (typeof config.appUrl !== 'string' || config.appUrl === '' || config.appUrl.startsWith('$')) return []
  const problem = allowedEntryProblem(config.appUrl)
  // The value is not echoed: a URL may carry a password.
  return problem === undefined ? [] : [`appUrl: ${problem} ${WHY}`]
}
