import type { ProjectUsage } from './usage.service.js';

/** CONTRACT §5 `GET /v1/usage` */
export function presentUsage(u: ProjectUsage) {
  return {
    object: 'usage' as const,
    sent_today: u.sentToday,
    sent_this_month: u.sentThisMonth,
    // issue 27: of those, the recipients of broadcasts (transactional = sent − broadcast)
    broadcast_today: u.broadcastToday,
    broadcast_this_month: u.broadcastThisMonth,
    verifications_used: u.verificationsUsed,
    limits: {
      daily: u.limits.daily,
      monthly: u.limits.monthly,
      domains: u.limits.domains,
      verifications: u.limits.verifications,
    },
  };
}
