import { iso } from '../../../lib/time.js';
import type { ListedCheck } from './blocklists.service.js';

/** An entry of GET /v1/blocklists (docs/blocklists.md). */
export function presentBlocklistCheck(c: ListedCheck) {
  return {
    object: 'blocklist_check' as const,
    target: c.target,
    kind: c.kind,
    list: c.zone,
    list_name: c.listName,
    state: c.state,
    // the last listed-or-clear answer: a list that failed to answer does not hide a listing
    listed: c.knownState === 'listed',
    codes: c.codes,
    reason: c.reason,
    since: iso(c.since),
    checked_at: iso(c.checkedAt),
  };
}
