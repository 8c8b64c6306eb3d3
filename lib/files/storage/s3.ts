// An S3-compatible bucket (AWS S3, R2, MinIO, ...; decision D20). Uploads stream through
// lib-storage's multipart `Upload`, so memory stays near queueSize x partSize whatever the file size.
import { Readable } from 'node:stream'
import {
  DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig, type S3ServiceException
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { assertValidKey, assertValidRange, storageError } from './keys.js'
import type { Storage, StoredObject } from './types.js'

export interface S3StorageOptions {
  bucket: string
  endpoint?: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: string
  forcePathStyle?: boolean
  /** A folder inside the bucket: keys are stored as `<prefix>/<key>`. */
  prefix?: string
}

const PART_SIZE = 5 * 1024 * 1024 // S3's minimum part size
const QUEUE_SIZE = 2
const DELETE_BATCH = 1000 // DeleteObjects' limit per request
const DEFAULT_TYPE = 'application/octet-stream'

export function createS3Storage (opts: S3StorageOptions): Storage {
  const config: S3ClientConfig = {
    region: opts.region ?? 'us-east-1',
    endpoint: opts.endpoint,
    forcePathStyle: opts.forcePathStyle,
    // Since 3.729 the SDK adds CRC32 checksums (and aws-chunked bodies with trailers) to every
    // upload; many S3-compatible servers reject those. Checksums only where the API requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED'
  }
  // Without explicit keys the SDK's default chain applies (env, profile, instance role); one key
  // alone is refused with the config (lib/config/checks/storage.ts).
  if (opts.accessKeyId !== undefined && opts.secretAccessKey !== undefined) {
    config.credentials = { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey }
  }
  const client = new S3Client(config)
  const Bucket = opts.bucket
  const folder = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '')
  const objectKey = (key: string): string => {
    assertValidKey(key)
    return folder === '' ? key : `${folder}/${key}`
  }

  async function stat (key: string): Promise<StoredObject | undefined> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }))
      return {
        key,
        size: head.ContentLength ?? 0,
        contentType: head.ContentType ?? DEFAULT_TYPE,
        etag: head.ETag ?? '""',
        lastModified: head.LastModified ?? new Date(0)
      }
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
  }

  return {
    kind: 's3',

    async put (key, body, meta) {
      const Key = objectKey(key)
      let size = 0
      let bodyError: unknown
      // Counts bytes on the way through; an error in `body` surfaces in the generator, so Upload
      // rejects and aborts any multipart upload it started (leavePartsOnError: false). Leaving the
      // loop early (Upload failed and destroyed this stream) destroys `body` too.
      const counted = Readable.from((async function * () {
        let yielding = false
        try {
          for await (const chunk of body as AsyncIterable<Buffer | string>) {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
            size += bytes.length
            yielding = true
            yield bytes
            yielding = false
          }
        } catch (err) {
          // An error thrown in at the yield is Upload's, not the body's.
          if (!yielding) bodyError = err
          throw err
        }
      })(), { objectMode: false })
      const upload = new Upload({
        client,
        params: { Bucket, Key, Body: counted, ContentType: meta.contentType },
        queueSize: QUEUE_SIZE,
        partSize: PART_SIZE,
        leavePartsOnError: false
      })
      let result: Awaited<ReturnType<typeof upload.done>>
      try {
        result = await upload.done()
      } catch (err) {
        // Stops reading `body` when S3 failed first (as pipeline() does for the local driver).
        counted.destroy()
        // When aborting the multipart upload also fails, Upload rejects with that error; the
        // caller needs the body's (e.g. the client went away), with the abort failure as its cause.
        if (bodyError === undefined || err === bodyError) throw err
        if (bodyError instanceof Error && bodyError.cause === undefined) bodyError.cause = err
        throw bodyError
      }
      // HEAD gives the values later stats will report (S3's own etag and last-modified).
      const stored = await stat(key)
      return stored ?? { key, size, contentType: meta.contentType, etag: result.ETag ?? '""', lastModified: new Date() }
    },

    stat,

    async read (key, range) {
      const Key = objectKey(key)
      if (range !== undefined) assertValidRange(range)
      try {
        const object = await client.send(new GetObjectCommand({
          Bucket, Key, Range: range === undefined ? undefined : `bytes=${range.start}-${range.end}`
        }))
        // In Node the SDK's body is an http.IncomingMessage (a Readable).
        return object.Body as Readable
      } catch (err) {
        if (isNotFound(err)) throw storageError('FB_ERR_NOT_FOUND', `File not found ${key}`)
        throw err
      }
    },

    async list (prefix) {
      const Prefix = prefix === '' ? (folder === '' ? undefined : `${folder}/`) : objectKey(prefix.replace(/\/+$/, '')) + '/'
      const found: StoredObject[] = []
      let ContinuationToken: string | undefined
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }))
        for (const object of page.Contents ?? []) {
          if (object.Key === undefined) continue
          found.push({
            key: folder === '' ? object.Key : object.Key.slice(folder.length + 1),
            size: object.Size ?? 0,
            // A listing carries no content type; callers that need it `stat` the object.
            contentType: DEFAULT_TYPE,
            etag: object.ETag ?? '""',
            lastModified: object.LastModified ?? new Date(0)
          })
        }
        ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined
      } while (ContinuationToken !== undefined)
      return found
    },

    async delete (keys) {
      // Every key is checked before anything is removed.
      const objects = keys.map((key) => ({ Key: objectKey(key) }))
      for (let i = 0; i < objects.length; i += DELETE_BATCH) {
        const batch = objects.slice(i, i + DELETE_BATCH)
        const result = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch, Quiet: true } }))
        // DeleteObjects answers 200 even when some keys failed; missing keys are not failures.
        const failed = (result.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey')
        if (failed.length > 0) {
          throw new Error(`Failed to delete ${failed.length} file(s): ${failed.slice(0, 3).map((e) => `${e.Key ?? '?'} (${e.Code ?? 'error'})`).join(', ')}`)
        }
      }
    },

    async close () {
      client.destroy()
    }
  }
}

/** Duck-typed as well as instanceof: a second copy of the SDK in node_modules has its own classes. */
function isNotFound (err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false
  const e = err as Partial<S3ServiceException>
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404
}
