// `defineAction`: types a code action's handler (its params from the TypeBox schema, the in-process
// tables as `fastbase types` described them) for the plugin's `actions` option. It returns the action as given.
import type { Static, TObject } from '@sinclair/typebox'
import type { CodeAction } from '../lib/actions/code.js'
import type { Tables } from './types.js'

/** Its name is kept as a literal type, so `CodeActionTypes` can type `runAction` with it. */
export function defineAction<const N extends string, P extends TObject, Result> (action: CodeAction<P, Result, Tables> & { name: N }): CodeAction<P, Result, Tables> & { name: N } {
  return action
}

/**
 * `runAction`'s entries for code actions (`fastbase types` sees only the config's): a project adds
 * `declare module 'fastbase' { interface FastbaseActions extends CodeActionTypes<typeof like | typeof rename> {} }`.
 */
export type CodeActionTypes<A extends { name: string, params: TObject }> = { [K in A as K['name']]: { params: Static<K['params']> } }
