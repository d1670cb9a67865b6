/**
 * A mistake in a template, with where it is (interface §2.4: "a message that
 * says where"): `html line 4, column 17: {{#if}} is never closed`. Line and
 * column are 1-based; the column counts UTF-16 units of that line.
 */
export class TemplateError extends Error {
  constructor(
    readonly field: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${field} line ${line}, column ${column}: ${reason}`);
    this.name = 'TemplateError';
  }
}

/** Builds TemplateErrors for one source: offsets become line and column only when something is wrong. */
export class Where {
  constructor(
    private readonly source: string,
    private readonly field: string,
  ) {}

  error(offset: number, reason: string): TemplateError {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < offset && i < this.source.length; i++) {
      if (this.source.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    return new TemplateError(this.field, line, offset - lineStart + 1, reason);
  }
}
