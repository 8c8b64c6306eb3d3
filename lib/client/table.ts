// fb.table(name): the table routes of docs/tables-api.md with their own parameters, files sent as
// multipart (docs/files.md), and realtime subscriptions of the table.
import type { Core } from './core.js'
import type { Json, Progress } from './http.js'
import { extractFiles, multipartBody } from './multipart.js'
import { subscribe, type RealtimeEvent, type SubscribeOptions } from './realtime.js'
import type { Insert, Row, TableName, Update } from './types.js'

type Fields = string | string[]

export interface SelectParams {
  where?: string
  select?: Fields
  order?: Fields
  limit?: number
  offset?: number
  distinct?: boolean
  group?: Fields
}
export interface ListParams extends SelectParams {
  /** `total` is -1 (the count is skipped). */
  skipTotal?: boolean
  /** PostgreSQL's planner estimate when it is 10,000 rows or more. */
  estimateTotal?: boolean
}
export interface Upload { onProgress?: (progress: Progress) => void }
export type Conflict = 'IGNORE' | 'REPLACE' | 'ABORT' | 'FAIL' | 'ROLLBACK'

export class Table<N extends TableName> {
  constructor (private readonly core: Core, readonly name: N) {}

  private path (route: string): string {
    return `/table/${encodeURIComponent(this.name)}/${route}`
  }

  /** JSON, or multipart when a field value is a file (`fields` names where the record's fields are). */
  private async write (route: string, json: Record<string, unknown>, fields: string | undefined, upload: Upload, query?: Record<string, unknown>): Promise<Json> {
    const records = fields === undefined ? json : json[fields]
    const list = Array.isArray(records) ? records : [records]
    const extracted = list.map((r) => typeof r === 'object' && r !== null ? extractFiles({ ...r }) : { fields: r, parts: [] })
    const parts = extracted.flatMap((e) => e.parts)
    if (parts.length === 0) return await this.core.call('POST', this.path(route), { json, query })
    if (extracted.length > 1) throw new TypeError('files can be sent with one record per insert')
    const body = fields === undefined ? extracted[0]!.fields : { ...json, [fields]: extracted[0]!.fields }
    return await this.core.call('POST', this.path(route), { multipart: multipartBody(body, parts), query, onProgress: upload.onProgress })
  }

  /** `{ items, total }`: `total` counts every matching row (see skipTotal, estimateTotal). */
  async list (params: ListParams = {}): Promise<{ items: Row<N>[], total: number }> {
    return await this.core.call('POST', this.path('list'), { json: params })
  }

  async select (params: SelectParams = {}): Promise<Row<N>[]> {
    return await this.core.call('POST', this.path('select'), { json: params })
  }

  /** One record by its id (a 404 FastbaseError when missing or hidden). */
  async view (id: string, params: { select?: Fields, where?: string } = {}): Promise<Row<N>> {
    return await this.core.call('GET', this.path(`view/${encodeURIComponent(id)}`), { query: params })
  }

  /** Without `returning` the answer is `[]`. */
  async insert (params: { values: Insert<N> | Insert<N>[], returning?: Fields, or?: Conflict }, upload: Upload = {}): Promise<Row<N>[]> {
    return await this.write('insert', { ...params }, 'values', upload)
  }

  async update (params: { where: string, setValues?: Update<N>, set?: Record<string, string>, returning?: Fields, or?: Conflict }, upload: Upload = {}): Promise<Row<N>[]> {
    return await this.write('update', { ...params }, 'setValues', upload)
  }

  /** Changes one record; answers it (`returning`, default its id). `or: 'INSERT'` creates it when missing. */
  async edit (id: string, values: Update<N>, options: Upload & { returning?: Fields, or?: 'INSERT' } = {}): Promise<Row<N>> {
    const { onProgress, ...query } = options
    return await this.write(`edit/${encodeURIComponent(id)}`, { ...values }, undefined, { onProgress }, query)
  }

  async delete (params: { where: string, returning?: Fields }): Promise<Row<N>[]> {
    return await this.core.call('POST', this.path('delete'), { json: params })
  }

  /** Live changes of the rows `where` matches (as `list` would show them); returns the unsubscribe. */
  subscribe (options: SubscribeOptions, callback: (event: RealtimeEvent<Row<N>>) => void): () => void {
    return subscribe(this.core, this.name, options, callback, async () => await this.list({ where: options.where }))
  }
}
