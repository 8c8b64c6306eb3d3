import { Type } from '@sinclair/typebox'

/** Every error body: `code` equals the HTTP status. */
export const ErrorSchema = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
}, { title: 'Error' })
