import { expect } from 'chai';
import { csvRow, parseCsv } from '../../src/lib/csv.js';

describe('CSV (RFC 4180)', function () {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF or LF, a BOM, and skips blank lines', function () {
    const text =
      '\ufeffemail,first_name,note\r\nann@x.example,Ann,"likes, commas"\n\nbob@x.example,"Bob ""B""","two\nlines"\r\ncid@x.example,,\n';
    expect(parseCsv(text)).to.deep.equal([
      { line: 1, fields: ['email', 'first_name', 'note'] },
      { line: 2, fields: ['ann@x.example', 'Ann', 'likes, commas'] },
      { line: 4, fields: ['bob@x.example', 'Bob "B"', 'two\nlines'] },
      { line: 6, fields: ['cid@x.example', '', ''] },
    ]);
  });

  it('refuses an unclosed quote and text after a closing quote, naming the line', function () {
    expect(() => parseCsv('a,b\n"open,x\n')).to.throw(/line 2: a quoted field is never closed/);
    expect(() => parseCsv('a\n"x"y\n')).to.throw(/line 2: text after a closing quote/);
  });

  it('writes what it reads back, quoting only when needed, and defuses spreadsheet formulas', function () {
    const fields = ['plain', 'with, comma', 'say "hi"', 'two\nlines', ''];
    expect(parseCsv(csvRow(fields))[0].fields).to.deep.equal(fields);
    expect(csvRow(['=1+2', '@cmd', '-x', '-5'])).to.equal(`"'=1+2","'@cmd","'-x",-5\r\n`);
  });
});
