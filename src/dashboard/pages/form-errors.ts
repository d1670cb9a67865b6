import { html, type Html } from './html.js';

// A form the API refused, shown again with the API's message beside the field it names (pure).

export interface FormError {
  message: string;
  /** the form field the message is about (the first part of the API's `field`), or null: shown above the form */
  field: string | null;
}

/** The form field an API `field` belongs to: `events[2]` is about `events`, `tracking.opens` about `tracking`. */
export function formFieldOf(apiField: string | undefined, fields: readonly string[]): string | null {
  const root = apiField?.split(/[.[]/)[0];
  return root && fields.includes(root) ? root : null;
}

/** An input's attributes when the error is about it: invalid, and described by the message beside it. */
export function invalid(error: FormError | undefined, prefix: string, field: string): Html {
  return error?.field === field ? html` aria-invalid="true" aria-describedby="${prefix}${field}-error"` : html``;
}

/** The error's message under its field, when the error is about that field. */
export function messageFor(error: FormError | undefined, prefix: string, field: string): Html {
  return error?.field === field
    ? html`<p class="error" role="alert" id="${prefix}${field}-error">${error.message}</p>`
    : html``;
}

/** The error's message above the form, when it is about no field of it. */
export function formMessage(error: FormError | undefined): Html {
  return error && error.field === null ? html`<p class="error" role="alert">${error.message}</p>` : html``;
}
