import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';

// POST /v1/templates/render: the dashboard's editors preview a version before it is published. It
// is checked as a publish would be, rendered as a send would be, and stores nothing.
eachDatabase('POST /v1/templates/render: a draft rendered before it is published', (db) => {
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant({ mode: 'test' });
  });
  after(async function () {
    await api.stop();
  });

  const render = (body: Record<string, unknown>, tenant: { api: Tenant['api'] } = t) =>
    tenant.api.post('/v1/templates/render', body);

  it('renders a design with variables and a translation, and stores no template', async function () {
    const r = await render({
      template: {
        subject: 'Hi {{name}}',
        design: {
          accent: '#ff0000',
          blocks: [
            { type: 'heading', text: 'Welcome, {{name}}' },
            { type: 'text', text: 'Only for pros', when: "plan == 'pro'" },
            { type: 'button', label: 'Open', url: 'https://shop.example/{{name}}' },
          ],
        },
        variables: { name: {}, plan: { required: false } },
        translations: { de: { subject: 'Hallo {{name}}' } },
      },
      variables: { name: 'Ann' },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'rendered_template', template_id: null, version: null, subject: 'Hi Ann' });
    expect(r.body.html).to.include('Welcome, Ann').and.include('#ff0000').and.include('https://shop.example/Ann');
    expect(r.body.html).to.not.include('Only for pros');
    expect(r.body.text).to.include('Welcome, Ann');
    const de = await render({
      template: { subject: 'Hi', text: 'x', translations: { de: { subject: 'Hallo' } } },
      language: 'de',
    });
    expect(de.body).to.include({ subject: 'Hallo', language: 'de' });
    expect((await t.api.get('/v1/templates')).body.data).to.deep.equal([]);
  });

  it('refuses a mistake under the template field that has it, and missing variables as a send would', async function () {
    const broken = await render({ template: { subject: 'Hi', html: '<p>{{#if x}}</p>', variables: { x: {} } } });
    const e = expectError(broken, 400, 'validation_error');
    expect(e.field).to.equal('template.html');
    expect(e.message).to.match(/^template\.html line 1, column \d+: /);
    const block = expectError(
      await render({ template: { subject: 'Hi', design: { blocks: [{ type: 'button', label: 'Go' }] } } }),
      400,
      'validation_error',
    );
    expect(block.field).to.equal('template.design.blocks[0].url');
    const undeclared = expectError(
      await render({ template: { subject: '{{who}}', text: 'x' } }),
      400,
      'validation_error',
    );
    expect(undeclared.field).to.equal('template.subject');
    expectError(
      await render({ template: { subject: 'Hi {{name}}', text: 'x', variables: { name: {} } }, variables: {} }),
      400,
      'invalid_variables',
    );
  });

  it('refuses an unknown field, and needs a key with templates:manage', async function () {
    expect(
      expectError(await render({ template: { subject: 'x', text: 'y' }, extra: 1 }), 400, 'validation_error').field,
    ).to.equal('extra');
    expect(
      expectError(await render({ template: { id: 'x', subject: 'x', text: 'y' } }), 400, 'validation_error').field,
    ).to.equal('template.id');
    expectError(await render({}), 400, 'validation_error');
    const k = await t.newKey({ mode: 'test', scopes: ['emails:send'] });
    expectError(await render({ template: { subject: 'x', text: 'y' } }, k), 403, 'forbidden');
    const anonymous = await fetch(`${api.baseUrl}/v1/templates/render`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ template: { subject: 'x', text: 'y' } }),
    });
    expect(anonymous.status).to.equal(401);
  });
});
