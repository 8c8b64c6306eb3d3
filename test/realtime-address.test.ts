// The key realtime's per-address shares are counted under (decision D89): a client's other spellings
// and the other addresses of its IPv6 /64 are one key.
import t from 'tap'
import { shareAddress } from '../lib/realtime/address.js'

t.equal(shareAddress('127.0.0.1'), '127.0.0.1', 'IPv4 as it is')
t.equal(shareAddress('::ffff:127.0.0.1'), '127.0.0.1', 'IPv4-mapped: the IPv4 address')
t.equal(shareAddress('::ffff:7f00:1'), '127.0.0.1', 'IPv4-mapped in hex groups')
t.equal(shareAddress('2001:db8:0:1::1'), '2001:db8:0:1::/64', 'IPv6: its /64')
t.equal(shareAddress('2001:0DB8:0000:0001:ffff:1:2:3'), '2001:db8:0:1::/64', 'any address of the /64, however spelled')
t.not(shareAddress('2001:db8:0:2::1'), shareAddress('2001:db8:0:1::1'), 'the next /64 is another key')
t.equal(shareAddress('::1'), '0:0:0:0::/64', 'loopback')
t.equal(shareAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone does not make another key')
t.equal(shareAddress('not an address'), 'not an address', 'anything else is its own key')
