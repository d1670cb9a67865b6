import { expect } from 'chai';
import {
  checkAttachmentName,
  decodeBase64Strict,
  guessContentType,
  sniffExecutable,
} from '../../src/modules/sending/emails/attachments.js';
import { checkCustomHeaders } from '../../src/modules/sending/emails/headers.js';

describe('attachment rules', function () {
  for (const name of [
    'setup.exe',
    'INVOICE.PDF.EXE',
    'a.exe.',
    'a.exe . ',
    'run.ps1',
    'x.js',
    'x.vbs',
    'x.bat',
    'x.cmd',
    'x.jar',
    'x.msi',
    'x.scr',
    'a.b.lnk',
  ]) {
    it(`refuses the name ${JSON.stringify(name)}`, () => expect(checkAttachmentName(name)).to.match(/refused/));
  }
  for (const name of [
    'report.pdf',
    'photo.jpeg',
    'data.csv',
    'archive.tar.gz',
    'exec-summary.docx',
    'noextension',
    'invoice-example.com.pdf',
    'q3.action.items.pdf',
    '.exe-notes.txt',
  ]) {
    it(`accepts the name ${JSON.stringify(name)}`, () => expect(checkAttachmentName(name)).to.equal(null));
  }
  it('refuses path separators in a name', () => expect(checkAttachmentName('../etc/passwd')).to.match(/path/));

  for (const name of [
    'tool.py',
    'x.pl',
    'x.rb',
    'x.php',
    'x.bash',
    'x.scpt',
    'x.applescript',
    'x.gadget',
    'setup.inf',
  ]) {
    it(`refuses the script name ${JSON.stringify(name)}`, () => expect(checkAttachmentName(name)).to.match(/refused/));
  }

  it('decodes base64 with or without padding, and nothing that is not base64', function () {
    expect(decodeBase64Strict(Buffer.from('hello').toString('base64'))!.toString()).to.equal('hello');
    expect(decodeBase64Strict('aGVsbG8')!.toString()).to.equal('hello');
    expect(decodeBase64Strict('aGk')!.toString()).to.equal('hi');
    expect(decodeBase64Strict('aGVsbG8==')).to.equal(null);
    expect(decodeBase64Strict('aGVsb')).to.equal(null);
    expect(decodeBase64Strict('aGVsbG9=')).to.equal(null);
    expect(decodeBase64Strict('====')).to.equal(null);
    expect(decodeBase64Strict('aGV$bG8=')).to.equal(null);
    expect(decodeBase64Strict('')).to.equal(null);
  });

  const exe = (bytes: number[]) => Buffer.concat([Buffer.from(bytes), Buffer.alloc(16)]);
  for (const [what, bytes] of [
    ['MZ', [0x4d, 0x5a]],
    ['ELF', [0x7f, 0x45, 0x4c, 0x46]],
    ['Mach-O 64', [0xcf, 0xfa, 0xed, 0xfe]],
    ['Mach-O universal', [0xca, 0xfe, 0xba, 0xbe]],
    ['shebang', [0x23, 0x21, 0x2f]],
    ['BOM + shebang', [0xef, 0xbb, 0xbf, 0x23, 0x21]],
  ] as const) {
    it(`recognises ${what} content`, () => expect(sniffExecutable(exe([...bytes]))).to.be.a('string'));
  }
  it('lets documents through', function () {
    expect(sniffExecutable(Buffer.from('%PDF-1.7\n'))).to.equal(null);
    expect(sniffExecutable(Buffer.from([0x89, 0x50, 0x4e, 0x47]))).to.equal(null);
    expect(sniffExecutable(Buffer.from('M'))).to.equal(null);
  });
  it('guesses common content types', function () {
    expect(guessContentType('a.PDF')).to.equal('application/pdf');
    expect(guessContentType('a.unknown')).to.equal('application/octet-stream');
  });
});

describe('custom header rules (CONTRACT §4)', function () {
  it('accepts up to 20 ordinary headers and List-Unsubscribe', function () {
    const h = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`X-H${i}`, 'v']));
    expect(checkCustomHeaders({ ...h, 'List-Unsubscribe': '<https://example.com/u>' })).to.equal(null);
  });
  for (const name of [
    'From',
    'to',
    'BCC',
    'Reply-To',
    'Subject',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'content-anything',
    'DKIM-Signature',
    'Return-Path',
    'Received',
    'Sender',
    'Resent-From',
    'X-Posthorn-Id',
  ]) {
    it(`refuses ${name}`, () =>
      expect(checkCustomHeaders({ [name]: 'x' })).to.deep.equal({
        field: `headers.${name}`,
        message: 'is set by the service and cannot be overridden',
      }));
  }
  it('refuses CR, LF and NUL in values', function () {
    for (const v of ['a\rb', 'a\nb', 'a\0b']) expect(checkCustomHeaders({ 'X-A': v })?.field).to.equal('headers.X-A');
  });
  it('refuses 21 headers, bad names and long values', function () {
    expect(
      checkCustomHeaders(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])))?.field,
    ).to.equal('headers');
    expect(checkCustomHeaders({ 'X A': 'v' })?.field).to.equal('headers.X A');
    expect(checkCustomHeaders({ 'X-A': 'v'.repeat(999) })?.message).to.match(/998/);
  });
});
