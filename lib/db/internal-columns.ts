// Columns of fastbase's own tables, which each concern declares beside its code (lib/internal/internal-tables.ts
// gathers them): text, and epoch seconds of the writer's clock.
export const text = (name: string, extra: object = {}) => ({ name, type: 'text' as const, sqlType: 'text' as const, ...extra })
export const epoch = (name: string, notNull = true) => ({ name, type: 'integer' as const, sqlType: 'integer' as const, notNull })
