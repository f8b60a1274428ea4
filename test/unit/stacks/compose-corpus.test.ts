// A corpus of real Compose files (test/fixtures/compose/SOURCES.md: docker/awesome-compose and the Compose
// specification's own examples): each one loads, or is refused with exactly the problems listed for it here,
// each naming the service and the key. Every fixture file is listed, so a new one cannot go unchecked.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCompose } from '../../../src/stacks/compose/load.js';

const ROOT = join(import.meta.dirname, '../../fixtures/compose');

/** 'ok', or the refusals as `service:key` (service empty for a top-level key), in the loader's order. */
const EXPECTED: Record<string, 'ok' | string[]> = {
  'awesome-compose/angular/compose.yaml': 'ok',
  'awesome-compose/apache-php/compose.yaml': 'ok',
  'awesome-compose/aspnet-mssql/compose.yaml': 'ok',
  'awesome-compose/django/compose.yaml': 'ok',
  'awesome-compose/elasticsearch-logstash-kibana/compose.yaml': ['logstash:ports[1]'],
  'awesome-compose/fastapi/compose.yaml': 'ok',
  'awesome-compose/flask-redis/compose.yaml': 'ok',
  'awesome-compose/flask/compose.yaml': 'ok',
  'awesome-compose/gitea-postgres/compose.yaml': 'ok',
  'awesome-compose/minecraft/compose.yaml': ['minecraft:volumes[0].source'],
  'awesome-compose/nextcloud-postgres/compose.yaml': 'ok',
  'awesome-compose/nextcloud-redis-mariadb/compose.yaml': 'ok',
  'awesome-compose/nginx-aspnet-mysql/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/nginx-flask-mongo/compose.yaml': 'ok',
  'awesome-compose/nginx-flask-mysql/compose.yaml': [':secrets.db-password.file', 'db:secrets', 'backend:secrets'],
  'awesome-compose/nginx-golang-mysql/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/nginx-golang-postgres/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/nginx-golang/compose.yaml': 'ok',
  'awesome-compose/nginx-nodejs-redis/compose.yaml': 'ok',
  'awesome-compose/nginx-wsgi-flask/compose.yaml': 'ok',
  'awesome-compose/pihole-cloudflared-DoH/compose.yaml': ['cloudflared:ports[1]', 'pihole:cap_add', 'pihole:ports[1]', 'pihole:ports[2]', 'pihole:volumes[0].source', 'pihole:volumes[1].source'],
  'awesome-compose/plex/compose.yaml': ['plex:network_mode', 'plex:volumes[0].source'],
  'awesome-compose/portainer/compose.yaml': ['portainer:volumes[0].source'],
  'awesome-compose/postgresql-pgadmin/compose.yaml': 'ok',
  'awesome-compose/prometheus-grafana/compose.yaml': 'ok',
  'awesome-compose/react-express-mongodb/compose.yaml': 'ok',
  'awesome-compose/react-express-mysql/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/react-java-mysql/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/react-nginx/compose.yaml': 'ok',
  'awesome-compose/react-rust-postgres/compose.yaml': 'ok',
  'awesome-compose/sparkjava-mysql/compose.yaml': [':secrets.db-password.file', 'backend:secrets', 'db:secrets'],
  'awesome-compose/sparkjava/compose.yaml': 'ok',
  'awesome-compose/spring-postgres/compose.yaml': [':secrets.db-password.file', 'db:secrets'],
  'awesome-compose/traefik-golang/compose.yaml': ['frontend:volumes[0].source'],
  'awesome-compose/vuejs/compose.yaml': 'ok',
  'awesome-compose/wasmedge-kafka-mysql/compose.yml': ['etl:runtime'],
  'awesome-compose/wasmedge-mysql-nginx/compose.yml': ['backend:runtime'],
  'awesome-compose/wireguard/compose.yaml': ['wireguard:cap_add', 'wireguard:ports[0]', 'wireguard:volumes[0].source', 'wireguard:volumes[1].source', 'wireguard:volumes[2].source'],
  'awesome-compose/wordpress-mysql/compose.yaml': 'ok',
  'compose-spec/02-model-1.yaml': [':secrets.server-certificate', ':configs.httpd-config', ':volumes.db-data.driver', ':volumes.db-data.driver_opts', 'frontend:configs', 'frontend:secrets'],
  'compose-spec/05-services-104.yaml': ['backend:volumes[0].volume.subpath', 'backend:volumes[1].source'],
  'compose-spec/05-services-12.yaml': [':configs.my_config.file', ':configs.my_other_config', 'redis:configs'],
  'compose-spec/05-services-13.yaml': [':configs.my_config', ':configs.my_other_config', 'redis:configs'],
  'compose-spec/05-services-17.yaml': [':configs.my_credentials_spec.file', 'myservice:credential_spec'],
  'compose-spec/05-services-18.yaml': 'ok',
  'compose-spec/05-services-19.yaml': ['web:depends_on.db.condition'],
  'compose-spec/05-services-3.yaml': 'ok',
  'compose-spec/05-services-67.yaml': ['short_syntax:models', 'long_syntax:models'],
  'compose-spec/05-services-73.yaml': ['backend:networks.back-tier.aliases', 'backend:networks.admin.aliases'],
  'compose-spec/05-services-75.yaml': 'ok',
  'compose-spec/05-services-76.yaml': 'ok',
  'compose-spec/05-services-78.yaml': 'ok',
  'compose-spec/05-services-79.yaml': 'ok',
  'compose-spec/05-services-85.yaml': ['app:pre_start'],
  'compose-spec/05-services-86.yaml': [':services'],
  'compose-spec/05-services-92.yaml': [':secrets.server-certificate', 'frontend:secrets'],
  'compose-spec/06-networks-1.yaml': 'ok',
  'compose-spec/06-networks-11.yaml': [':networks.outside.external'],
  'compose-spec/06-networks-2.yaml': 'ok',
  'compose-spec/07-volumes-1.yaml': 'ok',
  'compose-spec/10-fragments-2.yaml': 'ok',
  'compose-spec/10-fragments-3.yaml': [':volumes.db-data.driver', ':volumes.metrics.driver', 'backend:volumes[0]', 'backend:volumes[1]'],
  'compose-spec/10-fragments-4.yaml': 'ok',
  'compose-spec/11-extension-1.yaml': 'ok',
  'compose-spec/11-extension-3.yaml': 'ok',
  'compose-spec/11-extension-4.yaml': ['nodeinfo:networks.functions', 'echoit:networks.functions', 'nodeinfo:depends_on.gateway', 'echoit:depends_on.gateway'],
  'compose-spec/15-profiles-1.yaml': 'ok',
  'compose-spec/build-1.yaml': ['custom:build.context'],
  'compose-spec/deploy-7.yaml': 'ok',
  'compose-spec/develop-1.yaml': 'ok',
};

function composeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? composeFiles(p) : /\.ya?ml$/.test(e) ? [relative(ROOT, p)] : [];
  });
}

describe('real Compose files', () => {
  const files = composeFiles(ROOT).sort();

  it('are at least 30, every one with its expectation listed', () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
    expect(files).toEqual(Object.keys(EXPECTED).sort());
    expect(Object.values(EXPECTED).filter((e) => e === 'ok').length).toBeGreaterThanOrEqual(30);
  });

  it.each(files)('%s', (file) => {
    const dir = dirname(join(ROOT, file));
    const load = loadCompose({ text: readFileSync(join(ROOT, file), 'utf8'), variables: {}, readFile: (p) => (existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : undefined) });
    if (EXPECTED[file] === 'ok') {
      expect(load.ok ? [] : load.problems).toEqual([]);
      if (load.ok) for (const s of load.stack.services) expect(s.image ?? s.build).toBeDefined();
    } else {
      expect(load.ok ? [] : load.problems.map((p) => `${p.service ?? ''}:${p.key}`)).toEqual(EXPECTED[file]);
      if (!load.ok) for (const p of load.problems) expect(p.message).not.toBe('');
    }
  });
});
