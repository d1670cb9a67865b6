import { expect } from 'chai';
import dns2 from 'dns2';
import { checkQuery, MAX_QUERY_BYTES } from '../../src/dns/packet-check.js';

const { Packet } = dns2;

/** A query as a resolver writes it: one question, and an OPT record offering `edns` bytes when given. */
function query(name: string, edns?: number): Buffer {
  const q = new Packet();
  q.header.id = 0x1234;
  q.questions.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN } as never);
  // the OPT record's CLASS is the payload size it offers (RFC 6891 §6.1.2)
  if (edns) q.additionals.push({ ...Packet.Resource.EDNS([]), class: edns });
  return q.toBuffer();
}

/** A header (id 1, the given flags and counts) followed by `body`. */
function message(flags: number, counts: [number, number, number, number], body: number[] | Buffer = []): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(1, 0);
  h.writeUInt16BE(flags, 2);
  counts.forEach((n, i) => h.writeUInt16BE(n, 4 + i * 2));
  return Buffer.concat([h, Buffer.from(body)]);
}

const TXT_IN = [0, 16, 0, 1];
const label = (s: string) => [s.length, ...Buffer.from(s)];

/** A small seeded generator, so that a failing case can be found again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('checkQuery (what a DNS message must look like before dns2 reads it)', function () {
  context('when the message is a query as resolvers send them', function () {
    it('passes it, with where its question ends and no payload size without EDNS', function () {
      const m = query('s1.tok1.dkim.example.com');
      expect(checkQuery(m)).to.deep.equal({ drop: null, questionEnd: m.length, ednsPayloadSize: null });
    });

    it("reads the requestor's UDP payload size from its OPT record", function () {
      const m = query('s1.tok1.dkim.example.com', 1232);
      const checked = checkQuery(m);
      expect(checked).to.include({ drop: null, ednsPayloadSize: 1232 });
      expect(checked.drop === null && checked.questionEnd).to.equal(12 + 26 + 4);
    });

    it('ignores an additional record that is not OPT (a TSIG we do not check)', function () {
      const tsig = [...label('key'), 0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0];
      expect(checkQuery(message(0x0100, [1, 0, 0, 1], [...label('x'), 0, ...TXT_IN, ...tsig]))).to.include({
        drop: null,
        ednsPayloadSize: null,
      });
    });

    it('passes a name of 255 octets, the most RFC 1035 allows', function () {
      const name = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
      expect(checkQuery(query(name)).drop).to.equal(null);
      const longer = name.replace(/d+$/, 'd'.repeat(62)).split('.').flatMap(label);
      expect(checkQuery(message(0x0100, [1, 0, 0, 0], [...longer, 0, ...TXT_IN]))).to.deep.equal({ drop: 'name' });
    });
  });

  context('when the header alone condemns it', function () {
    const cases: Array<[string, Buffer, string]> = [
      ['13 bytes claiming 65,535 records per section', message(0, [0xffff, 0xffff, 0xffff, 0xffff], [0]), 'short'],
      ['less than a header and a question', message(0, [1, 0, 0, 0], [0, 0, 16, 0]), 'short'],
      ['a response (QR set)', message(0x8180, [1, 0, 0, 0], [0, ...TXT_IN]), 'response'],
      ['a NOTIFY (opcode 4)', message(0x2000, [1, 0, 0, 0], [0, ...TXT_IN]), 'opcode'],
      ['an UPDATE (opcode 5)', message(0x2800, [1, 0, 0, 0], [0, ...TXT_IN]), 'opcode'],
      ['no question', message(0x0100, [0, 0, 0, 0], [0, ...TXT_IN]), 'qdcount'],
      ['two questions', message(0x0100, [2, 0, 0, 0], [0, ...TXT_IN, 0, ...TXT_IN]), 'qdcount'],
      ['an additional record claimed in 17 bytes', message(0x0100, [1, 0, 0, 1], [0, ...TXT_IN]), 'counts'],
      ['3 records claimed where 2 fit', message(0x0100, [1, 1, 1, 1], Buffer.alloc(5 + 22)), 'counts'],
      ['an answer record in a query', message(0x0100, [1, 1, 0, 0], Buffer.alloc(5 + 11)), 'records'],
      ['an authority record in a query', message(0x0100, [1, 0, 1, 0], Buffer.alloc(5 + 11)), 'records'],
      ['two additional records', message(0x0100, [1, 0, 0, 2], Buffer.alloc(5 + 22)), 'records'],
      ['more bytes than any query', message(0x0100, [1, 0, 0, 0], Buffer.alloc(MAX_QUERY_BYTES)), 'oversize'],
    ];
    for (const [what, m, reason] of cases) {
      it(`drops ${what} as ${reason}`, function () {
        expect(checkQuery(m)).to.deep.equal({ drop: reason });
      });
    }
  });

  context("when the question's name is not plain labels", function () {
    const cases: Array<[string, number[]]> = [
      ['a compression pointer to itself', [0xc0, 12, ...TXT_IN]],
      ['a label, then a pointer back to it (a loop)', [...label('a'), 0xc0, 12, ...TXT_IN]],
      ['a pointer into the header', [0xc0, 2, ...TXT_IN]],
      ['a reserved label type (01)', [0x41, ...Buffer.alloc(65, 0x61), 0, ...TXT_IN]],
      ['a reserved label type (10)', [0x81, 0x61, 0, ...TXT_IN]],
      ['a label longer than the message', [40, ...label('abc'), ...TXT_IN]],
      ['no root label before the end', [...label('abc'), ...label('de')]],
      ['no QTYPE and QCLASS after the name', [...label('abc'), 0, 0, 16, 0]],
    ];
    for (const [what, body] of cases) {
      it(`drops ${what}`, function () {
        const m = message(0x0100, [1, 0, 0, 0], body);
        expect(checkQuery(m)).to.deep.equal({ drop: m.length < 17 ? 'short' : 'name' });
      });
    }

    it('drops an OPT record that does not fit after a long question (counts)', function () {
      expect(
        checkQuery(message(0x0100, [1, 0, 0, 1], [...label('a'.repeat(20)), 0, ...TXT_IN, 0, 0, 41])),
      ).to.deep.equal({ drop: 'counts' });
    });
  });

  context('when the messages are random', function () {
    it('never throws, and what it passes is a question of at most 255 name bytes that dns2 reads as one', function () {
      const r = rng(38);
      let passed = 0;
      for (let i = 0; i < 20_000; i++) {
        const m = Buffer.alloc(Math.floor(r() * 600));
        for (let j = 0; j < m.length; j++) m[j] = Math.floor(r() * 256);
        // every other one with a query's header, so that the name walk and dns2 see them
        if (i % 2 && m.length >= 12) m.set([0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, r() < 0.5 ? 1 : 0], 2);
        if (i % 4 === 1 && m.length > 20) m.set([3, 0x61, 0x62, 0x63, 0], 12);
        const checked = checkQuery(m);
        if (checked.drop) continue;
        passed++;
        // the header, a name of 255 bytes at most, QTYPE and QCLASS: all dns2 is given to read
        expect(checked.questionEnd).to.be.at.most(12 + 255 + 4);
        const head = Buffer.from(m.subarray(0, checked.questionEnd));
        head.writeUInt16BE(0, 10);
        expect(Packet.parse(head).questions).to.have.length(1);
      }
      expect(passed).to.be.above(100);
    });
  });
});
