// The project's shapes, as `fastbase types` describes them: its generated file augments ClientTables
// and ClientActions (from the same schemas that validate writes). Until then any table and action
// name is accepted, with loose rows.
import type { FileInput } from './multipart.js'

// Filled by module augmentation (`declare module 'fastbase/client'`); empty here on purpose.
// biome-ignore lint/suspicious/noEmptyInterface: augmented by the generated declarations
export interface ClientTables {}
// biome-ignore lint/suspicious/noEmptyInterface: augmented by the generated declarations
export interface ClientActions {}

export interface TableShapes { row: object, insert: object, update: object }
type AnyRecord = Record<string, unknown>

export type Tables = [keyof ClientTables] extends [never] ? Record<string, { row: AnyRecord, insert: AnyRecord, update: AnyRecord }> : ClientTables
export type Actions = [keyof ClientActions] extends [never] ? Record<string, { params: AnyRecord }> : ClientActions

export type TableName = keyof Tables & string
export type ActionName = keyof Actions & string

type Shape<N extends TableName, K extends keyof TableShapes> = Tables[N] extends Record<K, infer S> ? S : never
export type Row<N extends TableName> = Shape<N, 'row'>
/** A string field may carry a file to upload (a file field holds the stored file's name). */
export type WithFiles<T> = { [K in keyof T]: T[K] | (string extends NonNullable<T[K]> ? FileInput : never) }
export type Insert<N extends TableName> = WithFiles<Shape<N, 'insert'>>
export type Update<N extends TableName> = WithFiles<Shape<N, 'update'>>
export type Params<N extends ActionName> = Actions[N] extends { params: infer P } ? P : never
