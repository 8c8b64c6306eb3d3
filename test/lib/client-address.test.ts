// The key a client is counted under, by realtime (decision D89) and the rate limits: a client's other spellings
// and the other addresses of its IPv6 /64 are one key.
import t from 'tap'
import { clientAddress } from '../../lib/client-address.js'

t.equal(clientAddress('127.0.0.1'), '127.0.0.1', 'IPv4 as it is')
t.equal(clientAddress('::ffff:127.0.0.1'), '127.0.0.1', 'IPv4-mapped: the IPv4 address')
t.equal(clientAddress('::ffff:7f00:1'), '127.0.0.1', 'IPv4-mapped in hex groups')
t.equal(clientAddress('2001:db8:0:1::1'), '2001:db8:0:1::/64', 'IPv6: its /64')
t.equal(clientAddress('2001:0DB8:0000:0001:ffff:1:2:3'), '2001:db8:0:1::/64', 'any address of the /64, however spelled')
t.not(clientAddress('2001:db8:0:2::1'), clientAddress('2001:db8:0:1::1'), 'the next /64 is another key')
t.equal(clientAddress('::1'), '0:0:0:0::/64', 'loopback')
t.equal(clientAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone does not make another key')
t.equal(clientAddress('not an address'), 'not an address', 'anything else is its own key')
