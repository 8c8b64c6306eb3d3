// Unit tests of the OAuth redirect flow's pure parts: the redirect checker and the state codec.
import t from 'tap'
import { createHash } from 'node:crypto'
import { allowedEntryProblem, checkRedirect, redirectPolicy } from '../../../../lib/auth/oauth/redirects.js'
import { STATE_LIFETIME, idTokenNonce, nonceMatches, pkceVerifier, readState, startState, stateKey } from '../../../../lib/auth/oauth/oauth-state.js'

t.test('redirect checker', async (t) => {
  const policy = redirectPolicy('https://app.example.com', ['https://admin.example.com:8443/panel', 'http://localhost:5173/', 'https://docs.example.com/guide/'])
  const allowed: Array<[string, string]> = [
    ['https://app.example.com', 'https://app.example.com/'],
    ['https://app.example.com/', 'https://app.example.com/'],
    ['https://app.example.com/dashboard?tab=1#top', 'https://app.example.com/dashboard?tab=1#top'],
    ['/dashboard', 'https://app.example.com/dashboard'],
    ['/a/../b', 'https://app.example.com/b'],
    ['HTTPS://APP.EXAMPLE.COM/x', 'https://app.example.com/x'],
    ['https://app.example.com:443/x', 'https://app.example.com/x'],
    ['https://admin.example.com:8443/panel', 'https://admin.example.com:8443/panel'],
    ['https://admin.example.com:8443/panel/users', 'https://admin.example.com:8443/panel/users'],
    ['http://localhost:5173/anything', 'http://localhost:5173/anything'],
    ['https://docs.example.com/guide/intro', 'https://docs.example.com/guide/intro']
  ]
  for (const [target, expected] of allowed) t.equal(checkRedirect(policy, target), expected, `allows ${target}`)
  const refused = [
    '', '//evil.example', '//evil.example/x', '/\\evil.example', '\\\\evil.example', 'https:\\\\evil.example',
    'https://app.example.com.evil', 'https://app.example.com.evil/x', 'https://app.example.com@evil', 'https://app.example.com@evil/x',
    'https://user:pw@app.example.com/', 'https://evil.example/?https://app.example.com',
    'http://app.example.com/', 'https://app.example.com:8443/', 'ftp://app.example.com/', 'javascript:alert(1)', 'JavaScript:alert(1)',
    'java\tscript:alert(1)', 'data:text/html,hi', ' https://app.example.com/', 'https://app.example.com/\n', 'https://app.example.com/a b',
    'https://app.example.com/%2f%2fevil', 'https://app.example.com/x%5C..', 'https://app.example.com/%00',
    'https://admin.example.com:8443/panelx', 'https://admin.example.com:8443/', 'https://admin.example.com/panel',
    'https://admin.example.com:8443/panel/../secret', 'https://docs.example.com/guide', 'https://docs.example.com/guidex',
    'http://localhost:5174/', 'https://localhost:5173/', 'evil.example', 'app.example.com/x', '%2f%2fevil.example',
    'https://app.example.com%2eevil.example/', '/%2f%2fevil.example', `https://app.example.com/${'a'.repeat(2100)}`
  ]
  for (const target of refused) t.equal(checkRedirect(policy, target), undefined, `refuses ${JSON.stringify(target.slice(0, 60))}`)
  t.equal(checkRedirect(redirectPolicy('https://app.example.com/app'), 'https://app.example.com/application'), undefined, 'a prefix ends on a / boundary')
  t.equal(checkRedirect(redirectPolicy('https://app.example.com/app'), '/app/x'), 'https://app.example.com/app/x')
  t.equal(checkRedirect(redirectPolicy('https://app.example.com/app'), '/other'), undefined, 'a path resolves against appUrl and must stay under it')
  t.equal(checkRedirect(redirectPolicy('https://bücher.example'), 'https://xn--bcher-kva.example/x'), 'https://xn--bcher-kva.example/x', 'IDN hosts compare in punycode')
  t.equal(allowedEntryProblem('https://app.example.com/x'), undefined)
  t.match(allowedEntryProblem('app.example.com'), /absolute/)
  t.match(allowedEntryProblem('https://a.example/?q=1'), /query/)
  t.match(allowedEntryProblem('https://u@a.example/'), /user/)
})

t.test('state codec', async (t) => {
  const key = stateKey('secret-a')
  const fields = { table: 'users', provider: 'google', callback: 'https://api.example.com/cb', redirect: 'https://app.example.com/' }
  const started = startState(key, fields)
  t.match(started.state, /^v1\.[\w-]+\.[\w-]{43}$/)
  const read = readState(key, started.state)
  t.ok('claims' in read)
  if (!('claims' in read)) return
  t.match(read.claims, fields)
  t.ok(nonceMatches(read.claims, started.nonce), 'the cookie nonce matches')
  t.notOk(nonceMatches(read.claims, startState(key, fields).nonce), 'another flow\'s nonce does not')
  t.notOk(nonceMatches(read.claims, undefined))
  t.notOk(nonceMatches(read.claims, ''))
  t.notOk(started.state.includes(started.nonce), 'the nonce never travels in the state')
  const verifier = pkceVerifier(key, started.nonce, read.claims.id)
  t.match(verifier, /^[\w-]{43}$/)
  t.equal(createHash('sha256').update(verifier).digest('base64url'), started.codeChallenge, 'S256 challenge of the derived verifier')
  t.not(pkceVerifier(key, 'other-nonce', read.claims.id), verifier, 'the verifier needs the cookie nonce')
  t.equal(idTokenNonce(key, read.claims.id), started.idTokenNonce)

  t.same(readState(stateKey('secret-b'), started.state), { problem: 'signature' }, 'another key')
  const [v, payload, mac] = started.state.split('.')
  const forged = Buffer.from(JSON.stringify({ ...read.claims, redirect: 'https://evil.example/' })).toString('base64url')
  t.same(readState(key, `${v}.${forged}.${mac}`), { problem: 'signature' }, 'a changed payload')
  // The first character: all six of its bits are the mac's (the last one's low bits are padding, so
  // writing it another way can decode to the same bytes).
  t.same(readState(key, `${v}.${payload}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`), { problem: 'signature' }, 'a changed mac')
  t.same(readState(key, `v2.${payload}.${mac}`), { problem: 'malformed' })
  t.same(readState(key, 'garbage'), { problem: 'malformed' })
  t.same(readState(key, `${started.state}.x`), { problem: 'malformed' })
  t.same(readState(key, started.state, Date.now() + STATE_LIFETIME * 1000 + 1000), { problem: 'expired' })
  t.not(startState(key, fields).state, started.state, 'every state is new')
})
