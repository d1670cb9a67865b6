import type { SendEmailBody } from '../../sending/emails/emails.schema.js';
import { escapeHtml } from '../../../lib/html.js';
import type { Form, Submitted } from './forms.repo.js';

// The confirmation mail of a double opt-in signup (docs/forms.md), as the body of a send: rendered
// from the form's template, or the built-in short message. Pure.

/** The variables a confirmation template gets. */
export function confirmationVariables(to: string, url: string, submitted: Submitted) {
  return {
    confirm_url: url,
    email: to,
    first_name: submitted.first_name ?? null,
    last_name: submitted.last_name ?? null,
  };
}

export function confirmationBody(form: Form, to: string, url: string, submitted: Submitted): SendEmailBody {
  // tagged so that the project can tell these mails from its own in GET /v1/emails
  const base = { from: form.from!, to: [to], tags: { posthorn: 'form_confirmation', form_id: form.id } };
  if (form.confirmTemplateId)
    return { ...base, template_id: form.confirmTemplateId, variables: confirmationVariables(to, url, submitted) };
  const text = [
    `Someone, probably you, asked to sign up ${to} for "${form.name}".`,
    '',
    `To confirm, open this link and press Confirm:`,
    url,
    '',
    'If it was not you, ignore this message: nothing happens without the confirmation, and the link stops working in 7 days.',
  ].join('\n');
  const html = `<p>Someone, probably you, asked to sign up ${escapeHtml(to)} for &quot;${escapeHtml(form.name)}&quot;.</p>
<p><a href="${escapeHtml(url)}">Confirm your subscription</a></p>
<p>If it was not you, ignore this message: nothing happens without the confirmation, and the link stops working in 7 days.</p>`;
  return {
    ...base,
    subject: `Confirm your subscription to ${form.name.replace(/[\r\n\0]+/g, ' ').slice(0, 900)}`,
    html,
    text,
  };
}
