import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { composeEnv, dockerEnv, packagingFile, readUnit } from '../helpers/packaging.js';

const PRODUCTION = packagingFile('posthorn.production.yaml');
const DOCKERFILE = packagingFile('Dockerfile');
const COMPOSE = packagingFile('compose.yaml');

describe('packaged configuration', function () {
  context('the sample production config (packaging/posthorn.production.yaml)', function () {
    it('loads with the appliance own loader: standard ports, STARTTLS, a public HTTPS URL, PostgreSQL', function () {
      const c = loadConfig({ path: PRODUCTION, env: {} });
      expect(c.smtp.inbound).to.include({ enabled: true, host: '0.0.0.0', port: 25 });
      expect(c.smtp.submission).to.include({ enabled: true, host: '0.0.0.0', port: 587 });
      expect(c.dns.server).to.deep.equal({ enabled: true, host: '0.0.0.0', port: 53 });
      expect(c.smtp.tls.key).to.match(/^\/etc\/posthorn\/.+\.pem$/);
      expect(c.smtp.tls.cert).to.match(/^\/etc\/posthorn\/.+\.pem$/);
      expect(c.http.publicUrl).to.match(/^https:\/\//);
      expect(c.http).to.include({ host: '127.0.0.1', port: 8025 });
      expect(c.database.client).to.equal('pg');
      expect(c.database.url).to.match(/^postgres(ql)?:\/\//);
      expect(c.outbound.hostname).to.equal(new URL(c.http.publicUrl!).hostname);
    });

    it('keeps its data in the one folder the systemd unit lets the service write', function () {
      const c = loadConfig({ path: PRODUCTION, env: {} });
      expect(c.dataDir).to.equal(
        `/var/lib/${readUnit(packagingFile('posthorn.service')).get('Service.StateDirectory')![0]}`,
      );
    });
  });

  context('the Docker image (packaging/Dockerfile)', function () {
    it('makes any config a container config: data on the /data volume, the API on every address, SMTP on every address at 25 and 587', function () {
      const env = dockerEnv(DOCKERFILE);
      for (const path of [undefined, PRODUCTION]) {
        const c = loadConfig({ path, env });
        expect(c.dataDir, String(path)).to.equal('/data');
        expect(c.http).to.include({ host: '0.0.0.0', port: 8025 });
        // config/default.yaml binds SMTP to loopback (docs/security.md); a container must face its network
        expect(c.smtp.inbound).to.include({ host: '0.0.0.0', port: 25 });
        expect(c.smtp.submission).to.include({ host: '0.0.0.0', port: 587 });
      }
      const text = readFileSync(DOCKERFILE, 'utf8');
      expect(text).to.match(/^VOLUME \/data$/m);
      expect(text).to.match(/^EXPOSE 8025\/tcp 25\/tcp 587\/tcp 53\/udp 53\/tcp$/m);
    });
  });

  context('the compose file (packaging/compose.yaml)', function () {
    const start = (vars: Record<string, string>) =>
      loadConfig({ env: { ...dockerEnv(DOCKERFILE), ...composeEnv(COMPOSE, 'posthorn', vars) } });

    it('starts on SQLite without TLS when nothing is set', function () {
      const c = start({});
      expect(c.database.client).to.equal('sqlite');
      expect(c.smtp.tls).to.deep.equal({ key: null, cert: null });
      expect(c.dataDir).to.equal('/data');
    });

    it('with the postgres profile, reaches the database the postgres service creates', function () {
      const vars = {
        POSTHORN_DATABASE_CLIENT: 'pg',
        POSTGRES_PASSWORD: 'Xq7p2Lw9',
        POSTHORN_TLS_KEY: '/etc/posthorn/tls/privkey.pem',
        POSTHORN_TLS_CERT: '/etc/posthorn/tls/fullchain.pem',
        POSTHORN_PUBLIC_URL: 'https://mail.example.com',
      };
      const c = start(vars);
      expect(c.database.client).to.equal('pg');
      expect(c.smtp.tls).to.deep.equal({ key: vars.POSTHORN_TLS_KEY, cert: vars.POSTHORN_TLS_CERT });
      expect(c.http.publicUrl).to.equal('https://mail.example.com');

      const url = new URL(c.database.url!);
      const pg = composeEnv(COMPOSE, 'postgres', vars);
      expect(url.hostname).to.equal('postgres');
      expect(decodeURIComponent(url.username)).to.equal(pg.POSTGRES_USER);
      expect(decodeURIComponent(url.password)).to.equal(pg.POSTGRES_PASSWORD);
      expect(url.pathname).to.equal(`/${pg.POSTGRES_DB}`);

      // without the profile the postgres service is not there, and the appliance must start all the same
      const doc = YAML.parse(readFileSync(COMPOSE, 'utf8'));
      expect(doc.services.postgres.profiles).to.deep.equal(['postgres']);
      expect(doc.services.posthorn.depends_on.postgres.required).to.equal(false);
    });
  });
});
