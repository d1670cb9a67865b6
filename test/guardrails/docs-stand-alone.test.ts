import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';

// The README and docs/ are all a user has: no page may send them to a
// document they cannot read (the engineers' design notes, an issue number),
// and every link between pages must land on a file and a heading that exist.

const pages = [
  join(PACKAGE_ROOT, 'README.md'),
  ...readdirSync(join(PACKAGE_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(PACKAGE_ROOT, 'docs', f)),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const h = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!h) continue;
    out.add(
      h[1]
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return out;
}

describe('the documentation stands alone', function () {
  it('cites no document a user does not have (design notes, issues)', function () {
    const found: string[] = [];
    for (const page of [...pages, join(PACKAGE_ROOT, 'docs', 'openapi.json')]) {
      readFileSync(page, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/CONTRACT|interface §|LIFECYCLE|\b[Ii]ssues? #?[0-9]/.test(line))
            found.push(`${relative(PACKAGE_ROOT, page)}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(found).to.deep.equal([]);
  });

  it('keeps the README short enough to read in one go (under 200 lines): the rest is in docs/', function () {
    expect(readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).to.be.below(200);
  });

  it('links only to files and headings that exist', function () {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const path = file ? resolve(dirname(page), file) : page;
        if (!existsSync(path)) {
          broken.push(`${relative(PACKAGE_ROOT, page)} → ${target} (no such file)`);
          continue;
        }
        if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor))
          broken.push(`${relative(PACKAGE_ROOT, page)} → ${target} (no such heading)`);
      }
    }
    expect(broken).to.deep.equal([]);
  });
});
