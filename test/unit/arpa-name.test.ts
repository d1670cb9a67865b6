import { expect } from 'chai';
import { arpaName } from '../../src/dns/resolver.js';

// smtp.reverse_dns asks the configured resolvers for the client address's PTR record by this name
describe('arpaName: the PTR name of a client address', function () {
  it('reverses an IPv4 address under in-addr.arpa, also when it comes IPv4-mapped on an IPv6 socket', function () {
    expect(arpaName('192.0.2.5')).to.equal('5.2.0.192.in-addr.arpa');
    expect(arpaName('::ffff:192.0.2.5')).to.equal('5.2.0.192.in-addr.arpa');
  });

  it('writes an IPv6 address as its 32 nibbles, reversed, under ip6.arpa (RFC 3596)', function () {
    expect(arpaName('2001:db8::1')).to.equal(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
  });
});
