import { Type } from '@sinclair/typebox'

/** Every error body: `code` equals the HTTP status; `data` is `{}` when the error has no details (as teenybase's). */
export const ErrorSchema = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown())
}, { title: 'Error' })
