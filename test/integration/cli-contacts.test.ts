import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { client, type Client } from '../helpers/http.js';
import { tempDir } from '../helpers/temp-dir.js';

// posthorn contacts import / export (issue 27; docs/contacts.md), against a running appliance's store.
describe('posthorn contacts import and export', function () {
  this.timeout(60_000);
  let config: string;
  let server: ServeProcess;
  let api: Client;
  let project: string;
  let dir: string;
  before(async function () {
    config = writeConfig({}).path;
    server = await startServe(config);
    api = client(server.baseUrl, server.output().match(/ph_test_[A-Za-z0-9]{40}/)![0]);
    project = (await runCli(['project', 'list', '--json', '--config', config])).json.find(
      (p: { name: string }) => p.name === 'default',
    ).id;
    dir = tempDir('posthorn-contacts-');
    await api.post('/v1/contact-properties', { key: 'plan', type: 'string' });
    await api.post('/v1/contact-properties', { key: 'seats', type: 'number' });
    await api.post('/v1/contact-properties', { key: 'vip', type: 'boolean' });
  });
  after(async function () {
    await server.stop();
  });

  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('imports good rows, reports each refused row with its line and reason, upserts, and fills an audience', async function () {
    await api.post('/v1/contacts', { email: 'old@csv.example', first_name: 'Old', properties: { plan: 'free' } });
    const aud = (await api.post('/v1/audiences', { name: 'Imported' })).body;
    const csv = [
      'email,first_name,last_name,plan,seats,vip',
      'ann@csv.example,Ann,Lee,pro,12,yes',
      '"Bob <BOB@csv.example>","Bob, Jr.",,team,3,no',
      'not an address,X,,pro,1,no',
      'cid@csv.example,Cid,,pro,many,no',
      'dee@csv.example,Dee',
      'ann@csv.example,Ann again,,pro,1,no',
      'old@csv.example,,,pro,,',
      '',
    ].join('\r\n');
    const r = await runCli([
      'contacts',
      'import',
      file('a.csv', csv),
      '--project',
      project,
      '--audience',
      aud.id,
      '--json',
      '--config',
      config,
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.deep.include({
      object: 'contacts_import',
      rows: 7,
      created: 2,
      updated: 1,
      audience_id: aud.id,
      added_to_audience: 3,
    });
    expect(r.json.refused).to.deep.equal([
      { line: 4, reason: r.json.refused[0].reason },
      { line: 5, reason: 'seats must be a number' },
      { line: 6, reason: 'has 2 fields, the header has 6' },
      { line: 7, reason: 'ann@csv.example is on line 2 already' },
    ]);
    expect(r.json.refused[0].reason).to.match(/^email /);
    const ann = (await api.get('/v1/contacts/ann@csv.example')).body;
    expect(ann).to.include({ first_name: 'Ann', last_name: 'Lee' });
    expect(ann.properties).to.deep.equal({ plan: 'pro', seats: 12, vip: true });
    expect(ann.audiences).to.deep.equal([aud.id]);
    expect((await api.get('/v1/contacts/bob@csv.example')).body.first_name).to.equal('Bob, Jr.');
    // an upsert keeps what the row leaves empty
    const old = (await api.get('/v1/contacts/old@csv.example')).body;
    expect(old).to.include({ first_name: 'Old' });
    expect(old.properties).to.deep.equal({ plan: 'pro' });
    expect((await api.get(`/v1/audiences/${aud.id}`)).body.contact_count).to.equal(3);

    // the text form lists the refused rows
    const text = await runCli([
      'contacts',
      'import',
      file('b.csv', 'email\r\nnope\r\n'),
      '--project',
      project,
      '--config',
      config,
    ]);
    expect(text.stdout)
      .to.match(/refused\s+1/)
      .and.include('Refused rows:');
  });

  it('refuses a file whose header names an unknown column, storing nothing', async function () {
    const before = (await api.get('/v1/contacts?limit=100')).body.data.length;
    const r = await runCli([
      'contacts',
      'import',
      file('c.csv', 'email,colour\r\nzed@csv.example,red\r\n'),
      '--project',
      project,
      '--json',
      '--config',
      config,
    ]);
    expect(r.code).to.not.equal(0);
    const err = JSON.parse(r.stderr).error;
    expect(err.code).to.equal('validation_error');
    expect(err.message).to.include('colour');
    expect((await api.get('/v1/contacts?limit=100')).body.data.length).to.equal(before);
  });

  it('exports what import reads back: the same file imported again creates nothing and changes every contact in place', async function () {
    const out = await runCli(['contacts', 'export', '--project', project, '--config', config]);
    expect(out.code, out.stderr).to.equal(0);
    const lines = out.stdout.trim().split('\r\n');
    expect(lines[0]).to.equal('email,first_name,last_name,unsubscribed,plan,seats,vip');
    expect(lines).to.include('ann@csv.example,Ann,Lee,false,pro,12,true');
    expect(lines).to.include('bob@csv.example,"Bob, Jr.",,false,team,3,false');
    const again = await runCli([
      'contacts',
      'import',
      file('round.csv', out.stdout),
      '--project',
      project,
      '--json',
      '--config',
      config,
    ]);
    expect(again.json).to.deep.include({ rows: lines.length - 1, created: 0, updated: lines.length - 1, refused: [] });
    expect((await api.get('/v1/contacts/ann@csv.example')).body.properties).to.deep.equal({
      plan: 'pro',
      seats: 12,
      vip: true,
    });
    const json = await runCli(['contacts', 'export', '--project', project, '--json', '--config', config]);
    expect(json.json).to.include({ object: 'contacts_export', rows: lines.length - 1 });
  });
});
