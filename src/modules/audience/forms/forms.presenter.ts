import { iso } from '../../../lib/time.js';
import type { Form } from './forms.repo.js';

/** `url`: the public page under http.public_url (null without one). */
export function presentForm(f: Form, publicUrl: string | null) {
  return {
    object: 'form' as const,
    id: f.id,
    name: f.name,
    audience_id: f.audienceId,
    fields: f.fields,
    double_opt_in: f.doubleOptIn,
    from: f.from,
    confirm_template_id: f.confirmTemplateId,
    redirect_url: f.redirectUrl,
    allowed_origins: f.allowedOrigins,
    environment: f.environment,
    url: publicUrl ? `${publicUrl.replace(/\/+$/, '')}/f/${f.id}` : null,
    created_at: iso(f.createdAt),
  };
}
