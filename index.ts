// The package entry: `import fastbase from 'fastbase'`, the config helpers and the config types.
export { default } from './app.js'
export { default as fastbase } from './app.js'
export type { FastbaseOptions } from './app.js'
export { sql, sqlValue, sqlRaw, baseFields, authFields, defineConfig } from './lib/config/helpers.js'
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
