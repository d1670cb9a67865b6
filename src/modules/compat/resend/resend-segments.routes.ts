import { Type } from '@sinclair/typebox';
import { NoNulString } from '../../../lib/schema.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import type { AudienceService } from '../../audience/audiences/audiences.service.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { cursorOf, ResendListQuery, resendList } from './resend-lists.js';
import {
  resendCreatedSegment,
  resendDeletedSegment,
  resendListedSegment,
  resendSegment,
  type GroupWord,
} from './resend-segments.js';

const route = keyedRoutes<{ audiences: AudienceService }>();

/** The limits POST /v1/audiences takes. */
const SegmentBody = Type.Object(
  { name: NoNulString({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: true },
);

/**
 * Resend's segments over the /v1 audiences service (resend-segments.ts says why audiences), at
 * /segments, and at /audiences as Resend's older API and SDKs name them.
 */
const groupRoutes = (at: Path, object: GroupWord) => [...groupReads(at, object), ...groupWrites(at, object)];

type Path = 'segments' | 'audiences';

function groupReads(at: Path, object: GroupWord) {
  const base = `${RESEND_PREFIX}/${at}`;
  return [
    route({
      method: 'GET',
      path: base,
      scope: 'contacts:manage',
      summary: `Resend's list of ${at}, newest first: {object: 'list', has_more, data}`,
      query: ResendListQuery,
      async handler({ services, principal, query }) {
        const { before, newerThan } = cursorOf(query);
        const page = await services.audiences.list(principal.project.id, query.limit, before, newerThan);
        return { status: 200, body: resendList(page.items.map(resendListedSegment), page.nextCursor !== null) };
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id`,
      scope: 'contacts:manage',
      summary: `Resend's ${object}: {object, id, name, created_at}`,
      async handler({ services, principal, params }) {
        const a = await services.audiences.get(principal.project.id, params.id);
        return { status: 200, body: resendSegment(a, object) };
      },
    }),
  ];
}

function groupWrites(at: Path, object: GroupWord) {
  const base = `${RESEND_PREFIX}/${at}`;
  return [
    route({
      method: 'POST',
      path: base,
      scope: 'contacts:manage',
      summary: `Resend's ${object} create: a named list of contacts (one of our audiences); answers {object, id, name}`,
      body: SegmentBody,
      async handler({ services, principal, body }) {
        const a = await services.audiences.create(principal.project.id, body.name);
        return { status: 201, body: resendCreatedSegment(a, object) };
      },
    }),
    route({
      method: 'PATCH',
      path: `${base}/:id`,
      scope: 'contacts:manage',
      summary: `Resend's ${object} update: rename it`,
      body: SegmentBody,
      async handler({ services, principal, params, body }) {
        const a = await services.audiences.rename(principal.project.id, params.id, body.name);
        return { status: 200, body: { object, id: a.id } };
      },
    }),
    route({
      method: 'DELETE',
      path: `${base}/:id`,
      scope: 'contacts:manage',
      summary: `Resend's ${object} remove: its contacts stay; refused while a segment, form or broadcast uses it`,
      async handler({ services, principal, params }) {
        const a = await services.audiences.delete(principal.project.id, params.id);
        return { status: 200, body: resendDeletedSegment(a, object) };
      },
    }),
  ];
}

export const resendSegmentsRoutes = [...groupRoutes('segments', 'segment'), ...groupRoutes('audiences', 'audience')];
