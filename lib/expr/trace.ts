// What a compiled expression took from its globals (`auth.*`, `request.*`, `params.*`), so that one
// compilation can serve every caller of the same class (lib/crud/read-plans.ts). A global either
// decided the SQL text (folded: `auth.role == 'staff'` became true or false) or was only bound as a
// parameter (`author_id == auth.uid` became `author_id = ?`). A bound value appears in the
// fragment's bindings as an unguessable token, which the plan replaces with each caller's value.
import { randomBytes } from 'node:crypto'
import type { TableField } from '../../schemas/config.js'
import { memoize } from '../memo.js'

export type Literal = string | number | boolean | null

/** A request value bound where the token stands, encoded for `field` (the column it meets). */
export type Slot = { path: string, field?: TableField }

// NUL cannot be typed into a query string and the nonce cannot be guessed: no caller value is a token.
const NONCE = `\u0000fb${randomBytes(8).toString('hex')}:`

export class Trace {
  /** Every global read, by dotted path: true when its value decided the SQL text. */
  readonly reads = new Map<string, boolean>()
  readonly slots = new Map<string, Slot>()

  read (path: string): void {
    if (!this.reads.has(path)) this.reads.set(path, false)
  }

  fold (path: string): void {
    this.reads.set(path, true)
  }

  token (slot: Slot): string {
    const token = `${NONCE}${this.slots.size}`
    this.slots.set(token, slot)
    return token
  }
}

/** The slot a binding stands for, if it is a token of this process. */
export function slotOf (trace: Trace, binding: unknown): Slot | undefined {
  return typeof binding === 'string' && binding.startsWith(NONCE) ? trace.slots.get(binding) : undefined
}

// Paths repeat on every request (they come from rules and plans): split once each.
const pathParts = memoize(1024, (path) => path.split('.'))

/** A global's value by dotted path (`auth.uid`), as expressions read it: objects as JSON text, missing as null. */
export function globalAt (globals: Record<string, unknown>, path: string): Literal {
  return globalAtParts(globals, pathParts(path))
}

/** The same, the path given as its parts (`['auth', 'uid']`). */
export function globalAtParts (globals: Record<string, unknown>, parts: readonly string[]): Literal {
  let current: unknown = globals
  for (const key of parts) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return null
    current = (current as Record<string, unknown>)[key]
  }
  if (current === undefined || current === null) return null
  if (typeof current === 'object') return JSON.stringify(current)
  return current as Literal
}

/** What of a value can change the SQL text when it is only bound: its null-ness and its JSON type. */
export function typeClass (value: Literal): string {
  if (value === null) return 'null'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float'
  return typeof value
}
