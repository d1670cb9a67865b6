import { expect } from 'chai';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { client } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

describe('posthorn template list | show | render (issue 20)', function () {
  this.timeout(60_000);
  let config: string;
  let server: ServeProcess;
  let projectId: string;
  const cli = (args: string[]) => runCli([...args, '--config', config]);

  before(async function () {
    config = writeConfig({ limits: { requests_per_second: 10_000 } }).path;
    server = await startServe(config);
    const api = client(server.baseUrl, server.output().match(/ph_test_[A-Za-z0-9]{40}/)![0]);
    projectId = (await cli(['project', 'list', '--json'])).json[0].id;
    const body = {
      id: 'invoice',
      name: 'Invoice',
      subject: 'Invoice {{ number }}',
      text: "Total {{ total | currency:'EUR' }}{{#if paid}} (paid){{/if}}\n{{#each lines as l}}- {{ l }}\n{{/each}}",
      variables: {
        number: {},
        total: { type: 'number' },
        paid: { type: 'boolean', required: false },
        lines: { type: 'array', required: false },
      },
      translations: { de: { subject: 'Rechnung {{ number }}' } },
    };
    expect((await api.post('/v1/templates', body)).status).to.equal(201);
    expect((await api.post('/v1/templates', { ...body, subject: 'Invoice #{{ number }}' })).status).to.equal(201);
    sent = await api.post('/v1/emails', {
      from: 'billing@example.test',
      to: ['delivered@simulator.posthorn.test'],
      template_id: 'invoice',
      variables: { number: 'n-1', total: 1, lines: ['secret-line-5e1b'] },
    });
  });
  let sent: { status: number; text: string; body: any };

  it('a template send is logged without its variables', async function () {
    expect(sent.status, sent.text).to.equal(202);
    // the request's log line reaches the pipe a moment after its answer
    await waitFor(async () => server.output().includes(sent.body.request_id), 5_000, 'the request log line');
    expect(server.output()).to.not.include('secret-line-5e1b');
  });
  after(async function () {
    await server.stop();
  });

  it('list and show print the templates and their versions', async function () {
    const list = await cli(['template', 'list', '--project', projectId, '--json']);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.json).to.deep.equal([
      { id: 'invoice', name: 'Invoice', latest_version: 2, versions: 2, created_at: list.json[0].created_at },
    ]);
    const table = await cli(['template', 'list', '--project', projectId]);
    expect(table.stdout.split('\n')[0]).to.match(/^ID\s+NAME\s+LATEST_VERSION/i);
    const show = await cli(['template', 'show', 'invoice', '--project', projectId, '--json']);
    expect(show.json.versions.map((v: { version: number; subject: string }) => [v.version, v.subject])).to.deep.equal([
      [2, 'Invoice #{{ number }}'],
      [1, 'Invoice {{ number }}'],
    ]);
    const one = await cli(['template', 'show', 'invoice', '--project', projectId, '--version', '1', '--json']);
    expect(one.json).to.include({ object: 'template_version', version: 1, subject: 'Invoice {{ number }}' });
  });

  it('render reads --var values as the version declares them, in the language asked for', async function () {
    const r = await cli([
      'template',
      'render',
      'invoice',
      '--project',
      projectId,
      '--language',
      'de',
      '--var',
      'number=7',
      '--var',
      'total=1234.5',
      '--var',
      'paid=true',
      '--var',
      'lines=["a","b"]',
      '--json',
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.include({
      object: 'rendered_template',
      template_id: 'invoice',
      version: 2,
      language: 'de',
      subject: 'Rechnung 7',
      html: null,
    });
    expect(r.json.text).to.equal('Total 1.234,50\u00a0€ (paid)\n- a\n- b\n');
    const human = await cli([
      'template',
      'render',
      'invoice',
      '--project',
      projectId,
      '--version',
      '1',
      '--var',
      'number=7',
      '--var',
      'total=3',
    ]);
    expect(human.stdout).to.include('Subject: Invoice 7').and.include('Total €3.00');
  });

  it('refuses what a send would refuse, on stderr with a non-zero exit', async function () {
    const missing = await cli(['template', 'render', 'invoice', '--project', projectId, '--var', 'total=3', '--json']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stdout).to.equal('');
    expect(JSON.parse(missing.stderr).error).to.include({ code: 'invalid_variables' });
    const notNumber = await cli([
      'template',
      'render',
      'invoice',
      '--project',
      projectId,
      '--var',
      'number=1',
      '--var',
      'total=lots',
      '--json',
    ]);
    expect(JSON.parse(notNumber.stderr).error.message).to.match(/total.*number/);
    const unknown = await cli(['template', 'show', 'nope', '--project', projectId, '--json']);
    expect(JSON.parse(unknown.stderr).error.code).to.equal('not_found');
  });
});
