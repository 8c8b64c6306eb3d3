// The package entry: `import fastbase from 'fastbase'`, the config helpers and the config types.
export { default } from './app.js'
export { default as fastbase } from './app.js'
export type { FastbaseOptions } from './app.js'
// The instance the host gets as `app.fastbase`: importing this package also types that decorator.
export type { Fastbase, FastbaseRuntimeOptions, SchemaService, FastbaseTables, FastbaseActions, Tables, TableMap, Hooks, As, Transaction } from './plugins/types.js'
// Extending fastbase in code: host routes' authentication, the in-process API, hooks, code actions.
export type { AuthContext as FastbaseCaller, AdminRole } from './lib/auth-context.js'
export type { AuthenticateOptions } from './plugins/host-auth.js'
export type { TableApi, TableShape, AnyTable, ReadArgs, ViewArgs, InsertArgs, UpdateArgs, EditArgs, DeleteArgs, Params } from './lib/api/tables.js'
export type { BeforeInsertEvent, BeforeUpdateEvent, BeforeDeleteEvent, AfterWriteEvent, AuthHookEvent, HookEvent } from './lib/crud/record-hooks.js'
export type { CodeAction, CodeActionContext } from './lib/actions/code.js'
export { defineAction } from './plugins/define-action.js'
export type { CodeActionTypes } from './plugins/define-action.js'
export { ANONYMOUS as anonymousCaller } from './lib/auth-context.js'
// What server code catches (`err instanceof FastbaseError`, `err.code`), and the header HTTP clients read.
export { FastbaseError, ConfigError, ERROR_CODE_HEADER, ERROR_CODES_BY_STATUS } from './lib/errors.js'
export {
  sql, sqlValue, sqlRaw, baseFields, authFields, defineConfig, tableField, createdTrigger, updatedTrigger,
  TableFieldUsageRecord, TableFieldUsageAuth, TableFieldDataType, TableFieldSqlDataType0, TableFieldSqlDataType1, TABLE_REF_TOKEN
} from './lib/config/helpers.js'
export type {
  SqlQuery,
  SqlLiteral,
  SqlValue,
  FieldType,
  SqlType,
  TableField,
  TableIndex,
  TableTrigger,
  RulesExtension,
  AuthExtension,
  TableExtension,
  TableData,
  ActionParam,
  ActionSqlQuery,
  ActionStep,
  ActionData,
  DatabaseSettings,
  AnySchema
} from './schemas/config.js'
// teenybase's names for the same types, so its configs' type imports keep working.
export type {
  TableField as TableFieldData,
  RulesExtension as TableRulesExtensionData,
  AuthExtension as TableAuthExtensionData,
  TableTrigger as SQLTrigger,
  TableIndex as SQLIndex,
  ActionData as SQLAction
} from './schemas/config.js'
