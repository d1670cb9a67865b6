import { expect } from 'chai';
import { naturalTime } from '../../src/modules/compat/resend/natural-time.js';

// Resend's scheduled_at phrases (docs/resend.md), against a fixed now: Monday 30 November 2026, 10:00 UTC.
const NOW = Date.UTC(2026, 10, 30, 10, 0);
const at = (phrase: string) => {
  const t = naturalTime(phrase, NOW);
  return t === null ? null : new Date(t).toISOString();
};

describe("Resend's natural-language scheduled_at", function () {
  it('reads "in N units"', function () {
    expect(at('in 1 min')).to.equal('2026-11-30T10:01:00.000Z');
    expect(at('in 5 minutes')).to.equal('2026-11-30T10:05:00.000Z');
    expect(at('In 2 Hours')).to.equal('2026-11-30T12:00:00.000Z');
    expect(at('in 3 days')).to.equal('2026-12-03T10:00:00.000Z');
    expect(at('in 1 week')).to.equal('2026-12-07T10:00:00.000Z');
  });

  it('reads a day and a time of day, UTC without a zone', function () {
    expect(at('tomorrow at 9am')).to.equal('2026-12-01T09:00:00.000Z');
    expect(at('tomorrow at 9:30 pm')).to.equal('2026-12-01T21:30:00.000Z');
    expect(at('today at 17:45')).to.equal('2026-11-30T17:45:00.000Z');
    // the next Friday; a weekday that is today means next week's
    expect(at('Friday at 3pm')).to.equal('2026-12-04T15:00:00.000Z');
    expect(at('monday at 8am')).to.equal('2026-12-07T08:00:00.000Z');
    expect(at('tomorrow at 12am')).to.equal('2026-12-01T00:00:00.000Z');
    expect(at('tomorrow at 12pm')).to.equal('2026-12-01T12:00:00.000Z');
  });

  it('reads a zone, with its daylight saving time', function () {
    // New York is on EST (UTC-5) in December, on EDT (UTC-4) in July
    expect(at('Friday at 3pm ET')).to.equal('2026-12-04T20:00:00.000Z');
    expect(naturalTime('tomorrow at 9am PT', Date.UTC(2026, 6, 1, 12))).to.equal(Date.UTC(2026, 6, 2, 16));
  });

  it('is null for what it does not read', function () {
    for (const p of [
      'soon',
      'in a while',
      'in 3 fortnights',
      'tomorrow at 25:00',
      'tomorrow at 13pm',
      'friday at 3pm XYZ',
      '',
    ])
      expect(at(p), p).to.equal(null);
  });
});
