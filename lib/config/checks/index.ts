// Cross-field checks: what the schema cannot say (names that must be unique, references that must
// exist, combinations of keys). Each returns `path: message` lines; all of them always run.
import type { Check } from './common.js'
import { checkActions } from './actions.js'
import { checkAppUrl } from './app.js'
import { checkStorage } from './storage.js'
import { checkOperations } from './operations.js'
import { checkExtensions, checkProviders } from './auth.js'
import { checkDefaults, checkSelectValues, checkThumbs, checkTypes } from './fields.js'
import { checkColumnRefs, checkForeignKeys, checkFieldNames, checkFullTextSearch, checkRecordUsages, checkTableFlags, checkTableNames } from './tables.js'
import { oauthConfigProblems } from '../../auth/oauth/oauth-providers.js'
import { listedOriginsProblems } from '../../auth/sessions/request-origin.js'
import { authCookieProblems } from '../../auth/sessions/auth-cookie.js'

export type { Check } from './common.js'

/** In this order (problems at one path keep it after sorting by path). */
export const CROSS_CHECKS: Check[] = [
  checkAppUrl, checkTableNames, checkFieldNames, checkForeignKeys, checkTypes, checkRecordUsages, checkTableFlags,
  checkExtensions, checkProviders, oauthConfigProblems, listedOriginsProblems, authCookieProblems, checkDefaults, checkSelectValues, checkThumbs, checkColumnRefs, checkFullTextSearch, checkActions, checkStorage, checkOperations
]
