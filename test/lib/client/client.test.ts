// fastbase/client in Node against a live server, on both dialects: the built module (dist/lib/client)
// runs the steps of test/fixtures/client/steps.js; the same scenarios run in chromium in
// test/lib/client/client-browser.test.ts.
import t from 'tap'
import { forEachDialect } from '../../helper.js'
import { liveServer } from '../../fixtures/client/server.js'
import { authScenario, realtimeScenario, secondFactorScenario, tableScenario, type Harness } from '../../fixtures/client/scenario.js'
import { skip } from '../../cli-run.js'
// @ts-expect-error plain JavaScript, shared with the browser test (no declarations)
import { newState, run } from '../../fixtures/client/steps.js'

async function nodeHarness (base: string): Promise<Harness> {
  const { createClient } = await import('../../../dist/lib/client/index.js')
  const state = newState(createClient)
  return { where: 'node', base, run: async (step, ...args) => await run(state, step, args) }
}

for (const [name, scenario] of [['auth', authScenario], ['tables and files', tableScenario], ['realtime', realtimeScenario], ['email codes and second factor', secondFactorScenario]] as const) {
  await t.test(name, { skip }, async (t) => {
    await forEachDialect(t, `client in Node: ${name}`, async (t, dialect) => {
      const server = await liveServer(t, dialect)
      await scenario(t, server, await nodeHarness(server.origin()))
    })
  })
}
