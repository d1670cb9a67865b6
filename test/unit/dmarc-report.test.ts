import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { constants, crc32, deflateRawSync, gzipSync } from 'node:zlib';
import {
  MAX_COMPRESSED_BYTES,
  MAX_XML_BYTES,
  readReportFile,
  ReportError,
  type ReportErrorCode,
} from '../../src/modules/receiving/dmarc/report-file.js';
import {
  parseAggregateReport,
  readAggregateReport,
  type AggregateReport,
} from '../../src/modules/receiving/dmarc/report-xml.js';

const DIR = fileURLToPath(new URL('../fixtures/dmarc/', import.meta.url));
const HOSTILE = DIR + 'hostile/';
const MB = 1024 * 1024;

interface Expected {
  file: string;
  reporter: string;
  orgName: string;
  reportId: string;
  domain: string;
  rows: number;
  messages: number;
  dkimPass: number;
  spfPass: number;
}

/** The figures a person reads off a report, computed the same way for what the reader returns. */
function figures(r: AggregateReport) {
  const sum = (pick: (row: AggregateReport['rows'][number]) => boolean) =>
    r.rows.filter(pick).reduce((n, row) => n + row.count, 0);
  return {
    orgName: r.orgName,
    reportId: r.reportId,
    domain: r.domain,
    rows: r.rows.length,
    messages: sum(() => true),
    dkimPass: sum((row) => row.dkimEval === 'pass'),
    spfPass: sum((row) => row.spfEval === 'pass'),
  };
}

/** The ReportError `run` throws; fails the test when it returns or throws anything else. */
function refusal(run: () => unknown): ReportError {
  try {
    run();
  } catch (e) {
    if (e instanceof ReportError) return e;
    throw e;
  }
  return expect.fail('expected a ReportError, got a result');
}

function expectRefused(run: () => unknown, code: ReportErrorCode, message?: RegExp): ReportError {
  const e = refusal(run);
  expect(e.code, e.message).to.equal(code);
  if (message) expect(e.message).to.match(message);
  return e;
}

/** How far the process's peak memory rose while `run` ran, and how long it took. */
function cost(run: () => void): { peakGrowthMb: number; ms: number } {
  const before = process.resourceUsage().maxRSS;
  const start = performance.now();
  run();
  return { peakGrowthMb: (process.resourceUsage().maxRSS - before) / 1024, ms: performance.now() - start };
}

/**
 * Raw deflate data that inflates to `copies` × `block`: the block is compressed once with a full
 * flush (no reference reaches back past it, so its bytes can be repeated as they are), then an
 * empty final block (0x03 0x00) ends the stream. A gigabyte of output costs a megabyte of input
 * and no gigabyte in this test.
 */
function deflateRepeated(block: Buffer, copies: number): Buffer {
  const chunk = deflateRawSync(block, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array<Buffer>(copies).fill(chunk), Buffer.from([0x03, 0x00])]);
}

function gzipOf(deflated: Buffer, crc = 0, size = 0): Buffer {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflated, trailer]);
}

interface Member {
  name: string;
  /** Stored as it is unless `deflated` is given. */
  content?: Buffer;
  deflated?: Buffer;
  /** What the headers claim the member inflates to. */
  declaredSize?: number;
}

/** A zip archive (APPNOTE 4.3) written the plain way: local headers, data, central directory, end record. */
function zipOf(members: Member[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const data = m.deflated ?? m.content ?? Buffer.alloc(0);
    const fields = {
      method: m.deflated ? 8 : 0,
      crc: m.content ? crc32(m.content) : 0,
      size: m.declaredSize ?? m.content?.length ?? 0,
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(fields.method, 8);
    local.writeUInt32LE(fields.crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(fields.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(fields.method, 10);
    central.writeUInt32LE(fields.crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(fields.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A minimal well-formed report; `patch` rewrites parts of it for each variant. */
function reportXml(patch: (xml: string) => string = (x) => x): string {
  return patch(`<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <report_metadata>
    <org_name>example.net</org_name>
    <email>dmarc@example.net</email>
    <report_id>r-1</report_id>
    <date_range><begin>1709683200</begin><end>1709769599</end></date_range>
  </report_metadata>
  <policy_published><domain>example.com</domain><adkim>r</adkim><aspf>s</aspf><p>quarantine</p><sp>reject</sp><pct>50</pct></policy_published>
  <record>
    <row>
      <source_ip>192.0.2.10</source_ip>
      <count>4</count>
      <policy_evaluated><disposition>quarantine</disposition><dkim>fail</dkim><spf>pass</spf></policy_evaluated>
    </row>
    <identifiers><envelope_from>bounce.example.com</envelope_from><header_from>example.com</header_from></identifiers>
    <auth_results>
      <dkim><domain>example.com</domain><selector>s1</selector><result>fail</result></dkim>
      <dkim><domain>esp.example</domain><result>pass</result></dkim>
      <spf><domain>bounce.example.com</domain><scope>mfrom</scope><result>pass</result></spf>
    </auth_results>
  </record>
</feedback>
`);
}

// Real reports of many receivers (test/fixtures/dmarc/README.md), labelled in expected.json by
// reading each XML with a separate reader: reporter, report id, domain, rows and message totals.
describe('DMARC aggregate report reader: the corpus of real reports', function () {
  const expected = JSON.parse(readFileSync(DIR + 'expected.json', 'utf8')) as Expected[];

  it('labels every report in the folder: at least 20, as zip, gzip and plain XML', function () {
    const files = readdirSync(DIR)
      .filter((f) => /\.(xml|zip|gz)$/.test(f))
      .sort();
    expect(expected.map((e) => e.file).sort()).to.deep.equal(files);
    expect(files.length).to.be.at.least(20);
    for (const ext of ['.zip', '.xml.gz', '.xml'])
      expect(
        files.filter((f) => f.endsWith(ext)),
        ext,
      ).to.not.have.lengthOf(0);
  });

  for (const e of expected) {
    it(`${e.file} (${e.reporter}): ${e.rows} rows, ${e.messages} messages, ${e.dkimPass} DKIM-aligned, ${e.spfPass} SPF-aligned`, function () {
      const { file, reporter, ...want } = e;
      expect(figures(readAggregateReport(readFileSync(DIR + file), file)), reporter).to.deep.equal(want);
    });
  }
});

describe('DMARC aggregate report reader: hostile attachments', function () {
  const hostile = (name: string) => readFileSync(HOSTILE + name);

  context('when the XML declares entities', function () {
    it('refuses an XXE report (SYSTEM entity to file:///etc/passwd) without reading the file', function () {
      const e = expectRefused(() => readAggregateReport(hostile('xxe.xml'), 'xxe.xml'), 'unsafe_xml', /entity/);
      expect(e.message).to.not.match(/root:/);
    });

    it('refuses a billion-laughs report at once', function () {
      const { ms } = cost(() => expectRefused(() => readAggregateReport(hostile('billion-laughs.xml')), 'unsafe_xml'));
      expect(ms).to.be.below(200);
    });

    it('reads a report whose DOCTYPE only names an external DTD (nothing is fetched), refuses one with declarations of its own', function () {
      const bare = reportXml((x) => x.replace('<feedback>', '<!DOCTYPE feedback SYSTEM "rua.dtd">\n<feedback>'));
      expect(parseAggregateReport(bare).rows.length).to.be.above(0);
      const subset = reportXml((x) =>
        x.replace('<feedback>', '<!DOCTYPE feedback [ <!ELEMENT feedback ANY> ]>\n<feedback>'),
      );
      expectRefused(() => parseAggregateReport(subset), 'unsafe_xml', /DOCTYPE/);
      const smuggled = reportXml((x) =>
        x.replace('<feedback>', '<!DOCTYPE feedback SYSTEM "rua.dtd" [ <!ATTLIST feedback x CDATA "y"> ]>\n<feedback>'),
      );
      expectRefused(() => parseAggregateReport(smuggled), 'unsafe_xml', /DOCTYPE/);
    });
  });

  context('when the compressed file is a bomb', function () {
    // Deflate cannot pass about 1032:1, so a gigabyte needs a megabyte of input, whose 100:1
    // allowance is past the 20 MB cap: these stop at the cap.
    it('stops a gzip of a gigabyte of zeros at 20 MB without allocating the gigabyte', function () {
      const bomb = gzipOf(deflateRepeated(Buffer.alloc(MB), 1024));
      expect(bomb.length).to.be.below(2 * MB);
      const { peakGrowthMb, ms } = cost(() =>
        expectRefused(() => readAggregateReport(bomb, 'bomb.xml.gz'), 'too_large'),
      );
      expect(peakGrowthMb, 'peak memory growth (MB)').to.be.below(150);
      expect(ms).to.be.below(2000);
    });

    it('stops a zip member of a gigabyte of zeros whose headers claim 1 KB at 20 MB', function () {
      const bomb = zipOf([
        { name: 'report.xml', deflated: deflateRepeated(Buffer.alloc(MB), 1024), declaredSize: 1024 },
      ]);
      const { peakGrowthMb, ms } = cost(() => expectRefused(() => readAggregateReport(bomb, 'bomb.zip'), 'too_large'));
      expect(peakGrowthMb, 'peak memory growth (MB)').to.be.below(150);
      expect(ms).to.be.below(2000);
    });

    it('refuses a small gzip bomb (tens of KB inflating to tens of MB) on its ratio', function () {
      const bomb = gzipSync(Buffer.alloc(30 * MB, 0x20));
      expect(bomb.length).to.be.below(64 * 1024);
      expectRefused(() => readReportFile(bomb), 'ratio');
    });

    it('refuses a small zip bomb on its ratio, whatever size its headers declare', function () {
      const bomb = zipOf([
        { name: 'report.xml', deflated: deflateRawSync(Buffer.alloc(30 * MB, 0x20), { level: 9 }), declaredSize: 900 },
      ]);
      expect(bomb.length).to.be.below(64 * 1024);
      expectRefused(() => readReportFile(bomb), 'ratio', /250 times/);
    });

    it('refuses output past 20 MB even at an ordinary ratio', function () {
      const block = Buffer.concat(
        Array<Buffer>(16).fill(Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7919) % 251))),
      );
      const file = gzipOf(deflateRepeated(block, Math.ceil(MAX_XML_BYTES / block.length) + 1));
      expect(file.length * 100).to.be.above(MAX_XML_BYTES);
      expectRefused(() => readReportFile(file), 'too_large', /20971520/);
    });

    it('refuses an attachment over 10 MB before looking inside', function () {
      const big = Buffer.alloc(MAX_COMPRESSED_BYTES + 1, 0x20);
      big[0] = 0x3c;
      expectRefused(() => readReportFile(big, 'big.xml'), 'too_large', /big\.xml/);
    });
  });

  context('when headers lie or the file is broken', function () {
    it('ignores a zip header that claims about 4 GB and reads the real, small report', function () {
      const report = readAggregateReport(hostile('lying-size.zip'), 'lying-size.zip');
      expect(figures(report)).to.include({ orgName: 'AOL', reportId: 'website.com_1504828800', rows: 1, messages: 1 });
    });

    it('refuses a truncated gzip as corrupt', function () {
      expectRefused(() => readAggregateReport(hostile('truncated.xml.gz')), 'corrupt');
    });

    it('refuses a gzip whose CRC-32 does not match its content', function () {
      const good = gzipSync(reportXml());
      good[good.length - 8] ^= 0xff;
      expectRefused(() => readAggregateReport(good), 'corrupt', /CRC/);
    });

    it('refuses malformed XML as corrupt rather than reading half of it', function () {
      expectRefused(() => parseAggregateReport(reportXml((x) => x.replace('</policy_published>', ''))), 'corrupt');
    });
  });

  context('when the attachment is not a report', function () {
    it('refuses a zip with no .xml member, naming its members', function () {
      expectRefused(() => readAggregateReport(hostile('no-xml.zip')), 'not_a_report', /README\.txt, report\.csv/);
    });

    it('refuses a zip with more than a few members', function () {
      const many = zipOf(
        ['a.xml', 'b.txt', 'c.txt', 'd.txt', 'e.txt'].map((name) => ({ name, content: Buffer.from(reportXml()) })),
      );
      expectRefused(() => readReportFile(many), 'not_a_report', /5 members/);
    });

    it('refuses a zip with two .xml members', function () {
      const two = zipOf(['a.xml', 'b.xml'].map((name) => ({ name, content: Buffer.from(reportXml()) })));
      expectRefused(() => readReportFile(two), 'not_a_report', /2 \.xml members/);
    });

    it('refuses an RSS feed, naming its root element', function () {
      expectRefused(() => readAggregateReport(hostile('rss.xml')), 'not_a_report', /<rss>/);
    });

    it('refuses a PDF whatever it is called', function () {
      expectRefused(
        () => readReportFile(Buffer.from('%PDF-1.4\n'), 'report.xml', 'application/pdf'),
        'not_a_report',
        /application\/pdf/,
      );
    });

    it('refuses a report without report_id, naming it', function () {
      expectRefused(() => readAggregateReport(hostile('missing-report-id.xml')), 'not_a_report', /report_id/);
    });

    it('refuses a report whose source_ip is not an address', function () {
      expectRefused(
        () => readAggregateReport(hostile('invalid-source-ip.xml')),
        'not_a_report',
        /source_ip.*999\.12\.0\.1/,
      );
    });

    it('refuses a report with a negative count', function () {
      expectRefused(() => readAggregateReport(hostile('negative-count.xml')), 'not_a_report', /count.*-5/);
    });

    for (const [element, patch] of [
      ['org_name', (x: string) => x.replace('<org_name>example.net</org_name>', '')],
      ['date_range', (x: string) => x.replace(/<date_range>.*<\/date_range>/, '')],
      ['domain', (x: string) => x.replace('<domain>example.com</domain><adkim>', '<adkim>')],
      ['record', (x: string) => x.replace(/<record>[\s\S]*<\/record>/, '')],
      ['count', (x: string) => x.replace('<count>4</count>', '')],
    ] as const) {
      it(`refuses a report without ${element}, naming it`, function () {
        expectRefused(() => parseAggregateReport(reportXml(patch)), 'not_a_report', new RegExp(element));
      });
    }
  });
});

describe('DMARC aggregate report reader: what real reporters vary', function () {
  it('reads every field of a report', function () {
    const r = parseAggregateReport(reportXml());
    expect(r).to.deep.equal({
      orgName: 'example.net',
      email: 'dmarc@example.net',
      reportId: 'r-1',
      begin: 1709683200000,
      end: 1709769599000,
      domain: 'example.com',
      policy: { p: 'quarantine', sp: 'reject', pct: 50, adkim: 'r', aspf: 's' },
      rows: [
        {
          sourceIp: '192.0.2.10',
          count: 4,
          disposition: 'quarantine',
          dkimEval: 'fail',
          spfEval: 'pass',
          headerFrom: 'example.com',
          envelopeFrom: 'bounce.example.com',
          dkim: [
            { domain: 'example.com', selector: 's1', result: 'fail' },
            { domain: 'esp.example', result: 'pass' },
          ],
          spf: [{ domain: 'bounce.example.com', scope: 'mfrom', result: 'pass' }],
        },
      ],
    });
  });

  it('reads a namespaced report with prefixed elements', function () {
    const xml = reportXml((x) =>
      x
        .replace(/<(\/?)([a-z_]+)/g, '<$1dmarc:$2')
        .replace('<dmarc:feedback>', '<dmarc:feedback xmlns:dmarc="urn:ietf:params:xml:ns:dmarc-2.0">'),
    );
    expect(figures(parseAggregateReport(xml))).to.include({ reportId: 'r-1', rows: 1, messages: 4 });
  });

  it('reads upper-case values and domains as lower case', function () {
    const xml = reportXml((x) =>
      x
        .replace('<disposition>quarantine', '<disposition>REJECT')
        .replace('<dkim>fail</dkim><spf>pass', '<dkim>PASS</dkim><spf>Fail')
        .replace('<domain>example.com</domain><adkim>', '<domain>Example.COM</domain><adkim>'),
    );
    const r = parseAggregateReport(xml);
    expect(r.domain).to.equal('example.com');
    expect(r.rows[0]).to.include({ disposition: 'reject', dkimEval: 'pass', spfEval: 'fail' });
  });

  it('reads many records and leaves optional elements out', function () {
    const record = (ip: string, count: number) =>
      `<record><row><source_ip>${ip}</source_ip><count>${count}</count></row><identifiers><header_from>example.com</header_from></identifiers></record>`;
    const xml = reportXml((x) =>
      x
        .replace(/<record>[\s\S]*<\/record>/, record('2001:db8::1', 2) + record('198.51.100.7', 0))
        .replace(/<email>.*<\/email>/, '')
        .replace('<pct>50</pct>', ''),
    );
    const r = parseAggregateReport(xml);
    expect(r.email).to.equal(null);
    expect(r.policy.pct).to.equal(null);
    expect(r.rows.map((row) => [row.sourceIp, row.count, row.dkimEval, row.dkim.length])).to.deep.equal([
      ['2001:db8::1', 2, 'fail', 0],
      ['198.51.100.7', 0, 'fail', 0],
    ]);
  });

  it('decodes the predefined entities and character references, nothing else', function () {
    const xml = reportXml((x) =>
      x.replace('<org_name>example.net</org_name>', '<org_name>AT&amp;T &#40;DMARC&#x29; &unknown;</org_name>'),
    );
    expect(parseAggregateReport(xml).orgName).to.equal('AT&T (DMARC) &unknown;');
  });

  it('reads a plain XML attachment that starts with a byte order mark and blank lines', function () {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('\r\n\n' + reportXml())]);
    expect(readAggregateReport(bytes, 'report.xml').reportId).to.equal('r-1');
  });

  it('tells the format by its bytes, not its name: a gzip called .zip is read as gzip', function () {
    expect(readAggregateReport(gzipSync(reportXml()), 'report.zip', 'application/zip').reportId).to.equal('r-1');
  });

  it('reads a stored (uncompressed) zip member beside a macOS resource fork', function () {
    const zip = zipOf([
      { name: '__MACOSX/._report.xml', content: Buffer.from('junk') },
      { name: 'report.xml', content: Buffer.from(reportXml()) },
    ]);
    expect(readAggregateReport(zip).reportId).to.equal('r-1');
  });

  it('reads the first gzip member and ignores bytes after its trailer (Mimecast appends CRLF)', function () {
    const file = Buffer.concat([gzipSync(reportXml()), Buffer.from('\r\n')]);
    expect(readAggregateReport(file, 'mimecast.xml.gz').reportId).to.equal('r-1');
  });
});
