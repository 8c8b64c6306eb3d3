// @fastify/multipart, for uploads (plugins/files.ts reads the parts with its own limits on each call).
// A host app may have registered it already: a second registration in one app is an error, and the
// host's serves fastbase as well (unless the host set `attachFieldsToBody`, which consumes the parts).
//
// Registered without its disk mode's clean-up hook (decision D139). fastbase streams each part to its
// own storage and never saves a request's files to the plugin's temporary folder, yet that hook, an
// async onResponse, would run on every table write, JSON or not, and cost each one a promise and a
// hook stage after its answer. Everything else the plugin adds (its parser, its request methods) is kept.
import fp from 'fastify-plugin'
import { fastifyMultipart } from '@fastify/multipart'
import type { FastifyInstance, FastifyPluginCallback } from 'fastify'

/** The hook the plugin adds for its disk mode: after the answer, it deletes the files `saveRequestFiles` kept. */
export const DISK_CLEANUP_HOOK = 'onResponse'

/** `app` as the plugin sees it: what it adds goes to `app`, but for its disk mode's clean-up hook. */
function withoutDiskCleanup (app: FastifyInstance): FastifyInstance {
  return new Proxy(app, {
    get (target, key) {
      if (key === 'addHook') {
        return function addHook (name: string, hook: unknown): unknown {
          return name === DISK_CLEANUP_HOOK ? target : Reflect.apply(target.addHook, target, [name, hook])
        }
      }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

async function multipart (app: FastifyInstance): Promise<void> {
  if (app.hasRequestDecorator('parts')) return
  const plugin: FastifyPluginCallback = fastifyMultipart
  await new Promise<void>((resolve, reject) => { plugin(withoutDiskCleanup(app), {}, (error) => { if (error instanceof Error) reject(error); else resolve() }) })
}

export default fp(multipart, { fastify: '5.x', name: 'fastbase-multipart' })
