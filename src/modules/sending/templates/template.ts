import type { CompiledTemplate, Declared } from './language/index.js';
import type { Design } from './design/design.schema.js';
import type { SplitItem, Translation } from './templates.schema.js';

// What a template and its versions are, as the service, the repo and the
// presenter see them (interface §2.4, CONTRACT §5).

export interface Template {
  /** the row's own key (tpl_…); `id` is the client's name for it, unique per project */
  uid: string;
  projectId: string;
  id: string;
  name: string;
  category: string | null;
  split: SplitItem[] | null;
  latestVersion: number;
  createdAt: number;
  updatedAt: number;
}

/** One part set a send renders: subject, html and text trees. */
export interface CompiledParts {
  subject: CompiledTemplate;
  html: CompiledTemplate | null;
  text: CompiledTemplate | null;
  /** the text was generated from the html (blank runs are tidied after rendering) */
  textGenerated: boolean;
  /** no text tree could be made at publish: the rendered html is converted at send */
  textFromRenderedHtml: boolean;
}

export interface CompiledVersion {
  main: CompiledParts;
  /** by language tag, lower-cased */
  translations: Record<string, CompiledParts>;
  /** lower-cased tag → the tag as the client wrote it */
  tags?: Record<string, string>;
}

/** A version as listed (GET /v1/templates/{id}): what the client sent, without the parsed trees. */
export interface TemplateVersionInfo {
  templateUid: string;
  templateId: string;
  version: number;
  /** as the client sent them */
  subject: string;
  html: string | null;
  text: string | null;
  design: Design | null;
  translations: Record<string, Translation>;
  /** with the defaults filled in (type string, required true) */
  variables: Declared;
  restoredFrom: number | null;
  createdAt: number;
  /**
   * What the client wrote when it wrote in another syntax than ours (Resend's, through /resend):
   * kept as it is for that surface to show back, opaque here; absent (null) for a /v1 publish.
   */
  foreignSource?: unknown;
}

/** A version with what a send renders. */
export interface TemplateVersion extends TemplateVersionInfo {
  compiled: CompiledVersion;
}

/** What a version is published from: the body of POST /v1/templates, or a version being restored. */
export interface VersionContent {
  subject: string;
  html: string | null;
  text: string | null;
  design: Design | null;
  translations: Record<string, Translation>;
  variables: Declared;
}
