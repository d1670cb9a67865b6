import { apiError, type ApiError } from '../../../lib/errors.js';
import type { Project } from '../../account/projects/projects.repo.js';
import { broadcastPeriod, periodsOf } from '../../account/projects/periods.js';

/**
 * The daily and monthly limits of interface §7, counted in live recipients
 * per UTC day and month: what was counted before the batch, plus what the
 * batch takes, request by request in arrival order.
 */
export class LimitBook {
  private readonly added = new Map<string, number>();
  private readonly periods: { day: string; month: string };

  constructor(
    private readonly used: Map<string, number>,
    now: number,
  ) {
    this.periods = periodsOf(now);
  }

  /**
   * Counts `n` recipients for the project, or refuses them (and counts
   * nothing) when a limit would be passed. Broadcast mail counts against the
   * same limits, and on counters of its own too (`b` + the period), so that
   * usage shows the two streams apart.
   */
  take(project: Project, n: number, broadcast = false): ApiError | null {
    const count = (period: string) =>
      (this.used.get(`${project.id}|${period}`) ?? 0) + (this.added.get(`${project.id}|${period}`) ?? 0);
    const { daily, monthly } = project.limits;
    if (daily > 0 && count(this.periods.day) + n > daily)
      return apiError(
        'daily_limit_exceeded',
        `this project may send to ${daily} live recipients a day; today's allowance is used up`,
      );
    if (monthly > 0 && count(this.periods.month) + n > monthly)
      return apiError(
        'quota_exhausted',
        `this project may send to ${monthly} live recipients a month; this month's allowance is used up`,
      );
    for (const period of [
      this.periods.day,
      this.periods.month,
      ...(broadcast ? [broadcastPeriod(this.periods.day), broadcastPeriod(this.periods.month)] : []),
    ]) {
      this.added.set(`${project.id}|${period}`, (this.added.get(`${project.id}|${period}`) ?? 0) + n);
    }
    return null;
  }

  /** What has been counted so far, for reset(): a batch refused in part counts nothing. */
  mark(): Map<string, number> {
    return new Map(this.added);
  }

  reset(mark: Map<string, number>): void {
    this.added.clear();
    for (const [k, n] of mark) this.added.set(k, n);
  }

  increments(): Array<[projectId: string, period: string, n: number]> {
    return [...this.added].map(([k, n]) => {
      const [projectId, period] = k.split('|') as [string, string];
      return [projectId, period, n];
    });
  }
}
