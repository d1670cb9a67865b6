import { Type } from '@sinclair/typebox';
import { NoNulString, pageQueryFields } from '../../../lib/schema.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { listBody } from '../../../lib/page.js';
import { presentContact } from '../contacts/contacts.presenter.js';
import { presentDeletedSegment, presentSegment } from './segments.presenter.js';
import type { SegmentService } from './segments.service.js';

const route = keyedRoutes<{ segments: SegmentService }>();

const CreateSegmentBody = Type.Object(
  {
    name: NoNulString({ minLength: 1, maxLength: 200 }),
    audience_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: "only this audience's contacts; all the project's unless given",
      }),
    ),
    filter: Type.String({
      minLength: 1,
      maxLength: 4000,
      description:
        "a condition as in a template's {{#if}}: plan == 'pro' and signup_date >= '2026-01-01'; names email, first_name, last_name, created_at and the declared properties",
    }),
  },
  { additionalProperties: false },
);

const MembersQuery = Type.Object(pageQueryFields('con'), { additionalProperties: false });
const ListQuery = Type.Object(pageQueryFields('seg'), { additionalProperties: false });

// Issue 27 (docs/contacts.md): scope contacts:manage everywhere
export const segmentRoutes = [
  route({
    method: 'POST',
    path: '/v1/segments',
    scope: 'contacts:manage',
    summary: 'Save a segment: a filter over contacts, checked now (400 naming line and column)',
    body: CreateSegmentBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentSegment(await services.segments.create(principal.project.id, body)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/segments',
    scope: 'contacts:manage',
    summary: "The project's segments, newest first",
    query: ListQuery,
    async handler({ services, principal, query }) {
      const page = await services.segments.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentSegment) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/segments/:id',
    scope: 'contacts:manage',
    summary: 'A segment',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentSegment(await services.segments.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/segments/:id',
    scope: 'contacts:manage',
    summary: 'Delete a segment',
    async handler({ services, principal, params }) {
      const segment = await services.segments.delete(principal.project.id, params.id);
      return { status: 200, body: presentDeletedSegment(segment) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/segments/:id/contacts',
    scope: 'contacts:manage',
    summary: "The segment's contacts now, newest first",
    query: MembersQuery,
    async handler({ services, principal, params, query }) {
      const page = await services.segments.contacts(principal.project.id, params.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentContact) };
    },
  }),
];
