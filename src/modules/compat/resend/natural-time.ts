// Resend's `scheduled_at` takes, besides an ISO 8601 time, a few phrases in English: "in 1 min",
// "in 2 hours", "tomorrow at 9am", "Friday at 3pm ET". This reads them (docs/resend.md lists the
// forms); pure, against the `now` it is given. Without a zone a time of day is UTC.

const UNIT_MS: Record<string, number> = {
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
};

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Zone abbreviations of the phrases, as IANA zones (so that daylight saving time is right). */
const ZONES: Record<string, string> = {
  utc: 'UTC',
  gmt: 'UTC',
  z: 'UTC',
  et: 'America/New_York',
  est: 'America/New_York',
  edt: 'America/New_York',
  ct: 'America/Chicago',
  cst: 'America/Chicago',
  cdt: 'America/Chicago',
  mt: 'America/Denver',
  mst: 'America/Denver',
  mdt: 'America/Denver',
  pt: 'America/Los_Angeles',
  pst: 'America/Los_Angeles',
  pdt: 'America/Los_Angeles',
  bst: 'Europe/London',
  cet: 'Europe/Paris',
  cest: 'Europe/Paris',
};

const RELATIVE = /^in\s+(\d{1,4})\s*([a-z]+?)s?$/;
const AT_DAY =
  /^(today|tomorrow|(?:next\s+)?(sunday|monday|tuesday|wednesday|thursday|friday|saturday))(?:\s+at)?\s+(.+)$/;
const TIME_OF_DAY = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s+([a-z]{1,4}))?$/;

/** The moment a phrase names (ms since the epoch), or null when it is not one of the forms. */
export function naturalTime(phrase: string, now: number): number | null {
  const p = phrase.trim().toLowerCase().replace(/\s+/g, ' ');
  const rel = RELATIVE.exec(p);
  if (rel) {
    const unit = UNIT_MS[rel[2]];
    return unit === undefined ? null : now + Number(rel[1]) * unit;
  }
  const at = AT_DAY.exec(p);
  if (!at) return null;
  const clock = TIME_OF_DAY.exec(at[3]);
  if (!clock) return null;
  let hour = Number(clock[1]);
  const minute = Number(clock[2] ?? 0);
  if (clock[3]) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (clock[3] === 'pm' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  const zone = clock[4] === undefined ? 'UTC' : ZONES[clock[4]];
  if (!zone) return null;
  const today = dateIn(zone, now);
  let days = 0;
  if (at[1] === 'tomorrow') days = 1;
  else if (at[2]) days = (DAYS.indexOf(at[2]) - today.weekday + 7) % 7 || 7;
  // "today at 9am" once 9am has passed is a time gone by, which a send takes as now
  return atLocal(zone, today.y, today.m, today.d + days, hour, minute);
}

/** The calendar date and weekday in `zone` at `t`. */
function dateIn(zone: string, t: number): { y: number; m: number; d: number; weekday: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    weekday: 'long',
  }).formatToParts(t);
  const get = (type: string) => parts.find((x) => x.type === type)!.value;
  return {
    y: Number(get('year')),
    m: Number(get('month')),
    d: Number(get('day')),
    weekday: DAYS.indexOf(get('weekday').toLowerCase()),
  };
}

/** The moment the wall clock of `zone` shows this date and time (the day may run past the month's end). */
function atLocal(zone: string, y: number, m: number, d: number, hour: number, minute: number): number {
  const guess = Date.UTC(y, m - 1, d, hour, minute);
  // the zone's offset at the guess, then once more at the corrected time (a DST change between)
  const first = guess - offsetOf(zone, guess);
  return guess - offsetOf(zone, first);
}

/** How far the zone's wall clock is ahead of UTC at `t`, in ms. */
function offsetOf(zone: string, t: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(t);
  const get = (type: string) => Number(parts.find((x) => x.type === type)!.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(t / 1000) * 1000;
}
