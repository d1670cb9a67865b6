import { iso } from '../../../lib/time.js';
import type { Form } from './forms.repo.js';

/** `url`: the form's public page (forms.service.ts pageUrl; null without http.public_url). */
export function presentForm(f: Form, url: string | null) {
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
    url,
    created_at: iso(f.createdAt),
  };
}

/** DELETE /v1/forms/{id} */
export const presentDeletedForm = (f: Form) => ({ object: 'form' as const, id: f.id, deleted: true });
