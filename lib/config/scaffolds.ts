// `fastbase/scaffolds/fields`: the module teenybase configs import their scaffolds from
// (`teenybase/scaffolds/fields`), with the same names.
import { authFields, baseFields, createdTrigger, updatedTrigger } from './helpers.js'

export { authFields, baseFields, createdTrigger, updatedTrigger, TABLE_REF_TOKEN } from './helpers.js'

/** Every scaffold field by name (`fields.email`). */
export const fields = Object.freeze(Object.fromEntries([...baseFields, ...authFields].map((f) => [f.name, f])))

export const triggers = Object.freeze({ created: createdTrigger, updated: updatedTrigger })
