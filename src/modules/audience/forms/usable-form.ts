import type { ContactProperty } from '../contacts/contact-properties.js';
import { listProperties } from '../contacts/contacts.repo.js';
import { findProject } from '../../account/projects/projects.repo.js';
import type { FormDeps } from './form-deps.js';
import * as repo from './forms.repo.js';
import type { Form } from './forms.repo.js';

/**
 * A form whose project may use it now, with the project's declared
 * properties: a suspended project's forms are not found, neither their page
 * nor their confirmation links (docs/forms.md). Its contacts' preference
 * pages keep working: unsubscribing must always be possible.
 */
export async function usableForm(
  deps: Pick<FormDeps, 'store'>,
  id: string,
): Promise<{ form: Form; declared: Map<string, ContactProperty> } | null> {
  const form = /^frm_[0-9a-z]{26}$/.test(id) ? await repo.formById(deps.store.reader, id) : null;
  const project = form ? await findProject(deps.store.reader, form.projectId) : null;
  if (!form || !project || project.suspended) return null;
  return { form, declared: new Map((await listProperties(deps.store.reader, form.projectId)).map((p) => [p.key, p])) };
}
