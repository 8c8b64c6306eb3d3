// `defineAction`: types a code action's handler (its params from the TypeBox schema, the in-process
// tables as `fastbase types` described them) for the plugin's `actions` option. It returns the action as given.
import type { TObject } from '@sinclair/typebox'
import type { CodeAction } from '../lib/actions/code.js'
import type { Tables } from './types.js'

export function defineAction<P extends TObject, Result> (action: CodeAction<P, Result, Tables>): CodeAction<P, Result, Tables> {
  return action
}
