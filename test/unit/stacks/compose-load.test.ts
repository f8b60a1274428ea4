// loadCompose: the normalised shape of each short and long syntax, the refusals (each naming the service and
// the key), profiles, extends, depends_on order and checks (tables over small files).
import { describe, expect, it } from 'vitest';
import { loadCompose } from '../../../src/stacks/compose/load.js';
import type { ComposeLoad, ComposeProblem, StackService } from '../../../src/stacks/model.js';

const yaml = (services: string, extra = '') => `services:\n${services.replace(/^/gm, '  ')}\n${extra}`;

function ok(load: ComposeLoad) {
  if (!load.ok) throw new Error(`expected a load, got ${JSON.stringify(load.problems)}`);
  return load;
}
const one = (service: string, extra = '', variables: Record<string, string> = {}, files: Record<string, string> = {}): StackService =>
  ok(loadCompose({ text: yaml(`web:\n  image: nginx:1.27\n${service.replace(/^/gm, '  ')}`, extra), variables, readFile: (p) => files[p] })).stack.services[0];
const problems = (text: string, files: Record<string, string> = {}, variables: Record<string, string> = {}): ComposeProblem[] => {
  const load = loadCompose({ text, variables, readFile: (p) => files[p] });
  if (load.ok) throw new Error(`expected problems, got a stack: ${JSON.stringify(load.stack)}`);
  return load.problems;
};
const keysOf = (p: ComposeProblem[]) => p.map((x) => `${x.service ?? ''}:${x.key}`);

describe('loadCompose: a plain service', () => {
  it('has the defaults of Compose', () => {
    expect(one('')).toEqual({
      name: 'web',
      image: 'nginx:1.27',
      environment: {},
      expose: [],
      volumes: [],
      tmpfs: [],
      dependsOn: [],
      restart: 'no',
      replicas: 1,
      limits: {},
      labels: {},
      init: false,
      networks: ['default'],
      svc: { links: [], jobs: [] },
    });
  });

  it('loads the same file to the same JSON twice', () => {
    const text = yaml('b:\n  image: redis:7\na:\n  image: nginx:1\n  environment: {Z: 1, A: 2}\n  depends_on: [b]');
    expect(JSON.stringify(loadCompose({ text, variables: {} }))).toBe(JSON.stringify(loadCompose({ text, variables: {} })));
  });
});

describe('loadCompose: normalisation', () => {
  it.each<[string, string, Partial<StackService>]>([
    ['command string', 'command: npm run start -- --port 3000', { command: ['npm', 'run', 'start', '--', '--port', '3000'] }],
    ['command list', 'command: ["sh", "-c", "a && b"]', { command: ['sh', '-c', 'a && b'] }],
    ['command quoted string', `command: sh -c 'echo $$HOME && sleep 1'`, { command: ['sh', '-c', 'echo $HOME && sleep 1'] }],
    ['entrypoint string', 'entrypoint: /docker-entrypoint.sh nginx', { entrypoint: ['/docker-entrypoint.sh', 'nginx'] }],
    ['environment list', 'environment:\n  - A=1\n  - B=x=y\n  - C=', { environment: { A: '1', B: 'x=y', C: '' } }],
    ['environment map', 'environment:\n  B: 2\n  A: true\n  C: ""', { environment: { A: 'true', B: '2', C: '' } }],
    ['expose', 'expose: ["3000", 4000, "5000-5002", "6000/tcp"]', { expose: [3000, 4000, 5000, 5001, 5002, 6000] }],
    ['published port short', 'ports: ["8080:80"]', { route: { kind: 'port', publishedPort: 8080, port: 80 }, expose: [80] }],
    ['published port with ip and protocol', 'ports: ["0.0.0.0:8080:80/tcp"]', { route: { kind: 'port', publishedPort: 8080, port: 80 }, expose: [80] }],
    ['published port long', 'ports:\n  - target: 80\n    published: "8081"\n    protocol: tcp', { route: { kind: 'port', publishedPort: 8081, port: 80 }, expose: [80] }],
    ['port without a published one', 'ports: ["3000"]', { expose: [3000] }],
    ['port on loopback', 'ports: ["127.0.0.1:5432:5432"]', { expose: [5432] }],
    ['a second published port', 'ports: ["80:80", "8443:443"]', { route: { kind: 'port', publishedPort: 80, port: 80 }, expose: [80, 443] }],
    ['x-svc domain and port', 'x-svc:\n  domain: App.Example.com\n  port: 3000', { route: { kind: 'domain', domain: 'app.example.com', port: 3000 }, expose: [3000] }],
    ['x-svc domain on the one exposed port', 'expose: [3000]\nx-svc: {domain: app.example.com}', { route: { kind: 'domain', domain: 'app.example.com', port: 3000 }, expose: [3000] }],
    ['x-svc domain wins over ports', 'ports: ["80:80"]\nx-svc: {domain: a.example.com, port: "80"}', { route: { kind: 'domain', domain: 'a.example.com', port: 80 }, expose: [80] }],
    ['named volume short', 'volumes: ["data:/var/lib/data:ro"]', { volumes: [{ kind: 'named', volume: 'data', target: '/var/lib/data', readOnly: true }] }],
    ['bind inside the stack', 'volumes: ["./conf/nginx.conf:/etc/nginx/nginx.conf:ro", "./:/app"]', { volumes: [{ kind: 'bind', source: 'conf/nginx.conf', target: '/etc/nginx/nginx.conf', readOnly: true }, { kind: 'bind', source: '.', target: '/app', readOnly: false }] }],
    ['volume long', 'volumes:\n  - type: volume\n    source: data\n    target: /data\n  - type: bind\n    source: ./x\n    target: /x\n    read_only: true\n  - type: tmpfs\n    target: /cache', { volumes: [{ kind: 'named', volume: 'data', target: '/data', readOnly: false }, { kind: 'bind', source: 'x', target: '/x', readOnly: true }], tmpfs: ['/cache'] }],
    ['anonymous volume', 'volumes: ["/var/cache"]', { volumes: [{ kind: 'named', volume: 'web-anon-0', target: '/var/cache', readOnly: false }] }],
    ['tmpfs string and options', 'tmpfs: /run:size=64m', { tmpfs: ['/run'] }],
    ['healthcheck string', 'healthcheck:\n  test: curl -f http://localhost/ || exit 1\n  interval: 1m30s\n  timeout: 10s\n  retries: 5\n  start_period: 40s', { healthcheck: { kind: 'command', test: ['CMD-SHELL', 'curl -f http://localhost/ || exit 1'], intervalMs: 90_000, timeoutMs: 10_000, retries: 5, startPeriodMs: 40_000 } }],
    ['healthcheck list with defaults', 'healthcheck:\n  test: ["CMD", "pg_isready"]', { healthcheck: { kind: 'command', test: ['CMD', 'pg_isready'], intervalMs: 30_000, timeoutMs: 30_000, retries: 3, startPeriodMs: 0 } }],
    ['healthcheck disabled', 'healthcheck:\n  disable: true', { healthcheck: { kind: 'disabled' } }],
    ['healthcheck NONE', 'healthcheck:\n  test: ["NONE"]', { healthcheck: { kind: 'disabled' } }],
    ['limits in deploy', 'deploy:\n  replicas: 3\n  resources:\n    limits: {cpus: "0.5", memory: 512m}', { replicas: 3, limits: { cpus: 0.5, memoryBytes: 512 * 1024 ** 2 } }],
    ['limits of the service', 'cpus: 1.5\nmem_limit: 1g\nscale: 2', { replicas: 2, limits: { cpus: 1.5, memoryBytes: 1024 ** 3 } }],
    ['restart', 'restart: unless-stopped', { restart: 'unless-stopped' }],
    ['restart on-failure count', 'restart: on-failure:5', { restart: 'on-failure' }],
    ['deploy restart policy', 'deploy:\n  restart_policy: {condition: any}', { restart: 'always' }],
    ['labels list', 'labels: ["a.b=1", "c"]', { labels: { 'a.b': '1', c: '' } }],
    ['stop grace, init, user, working dir', 'stop_grace_period: 1m\ninit: true\nuser: "1000:1000"\nworking_dir: /app', { stopGracePeriodMs: 60_000, init: true, user: '1000:1000', workingDir: '/app' }],
    ['x-svc settings', 'x-svc:\n  strategy: stop_first\n  health_path: /healthz\n  links: [{service: db, alias: DB}]\n  jobs:\n    - {name: nightly, schedule: "0 3 * * *", command: "rake cleanup", timeout_seconds: 60}', { svc: { strategy: 'stop_first', healthPath: '/healthz', links: [{ service: 'db', alias: 'DB' }], jobs: [{ name: 'nightly', schedule: '0 3 * * *', command: ['rake', 'cleanup'], timeoutSeconds: 60 }] } }],
  ])('%s', (_name, service, want) => {
    const extra = 'volumes:\n  data: {}\n';
    expect(one(service, extra)).toMatchObject(want);
  });

  it('keeps the engine defaults safe: privileged false, network_mode bridge, ipc private are fine', () => {
    expect(one('privileged: false\nnetwork_mode: bridge\nipc: private').name).toBe('web');
  });

  it('merges env_file then environment, interpolated from the stack variables', () => {
    const files = { 'web.env': 'A=from-file\nB=${TOKEN}\n', 'extra.env': 'C=3' };
    const s = one('env_file: [web.env, {path: ./missing.env, required: false}, extra.env]\nenvironment:\n  A: from-env\n  TOKEN:\n  UNSET_HERE:', '', { TOKEN: 's3cret' }, files);
    expect(s.environment).toEqual({ A: 'from-env', B: 's3cret', C: '3', TOKEN: 's3cret' });
  });

  it('builds from a context inside the repository, args from variables', () => {
    const load = ok(loadCompose({ text: yaml('api:\n  build:\n    context: ./api\n    dockerfile: Dockerfile.prod\n    args: [VERSION, MODE=prod]\n    target: runtime\nweb:\n  build: .'), variables: { VERSION: '1.2' }, composeDir: 'deploy' }));
    expect(load.stack.services.map((s) => s.build)).toEqual([
      { context: 'deploy/api', dockerfile: 'Dockerfile.prod', args: { MODE: 'prod', VERSION: '1.2' }, target: 'runtime' },
      { context: 'deploy', args: {} },
    ]);
  });

  it('interpolates the whole file, warns about unset variables, and the stack variables win over .env', () => {
    const load = ok(loadCompose({ text: yaml('web:\n  image: "nginx:${TAG:-1.27}"\n  ports: ["${PORT}:80"]\n  environment: {X: "$NOPE"}'), variables: { PORT: '8088' }, readFile: (p) => (p === '.env' ? 'TAG=1.25\nPORT=1' : undefined) }));
    expect(load.stack.services[0]).toMatchObject({ image: 'nginx:1.25', route: { kind: 'port', publishedPort: 8088, port: 80 }, environment: { X: '' } });
    expect(load.warnings).toContain('interpolation: the variable NOPE is not set: an empty string is used');
  });

  it('reads YAML anchors and merge keys (compose-spec fragments)', () => {
    const text = 'x-common: &common\n  restart: always\n  environment: {SHARED: "1"}\nservices:\n  a:\n    <<: *common\n    image: nginx:1\n  b:\n    <<: *common\n    image: redis:7\n';
    const load = ok(loadCompose({ text, variables: {} }));
    expect(load.stack.services.map((s) => [s.name, s.restart, s.environment])).toEqual([['a', 'always', { SHARED: '1' }], ['b', 'always', { SHARED: '1' }]]);
  });

  it('merges extends from the same file', () => {
    const text = yaml('base:\n  image: app:1\n  environment: [A=1, B=1]\n  ports: ["80:80"]\n  depends_on: [db]\n  profiles: [tools]\nworker:\n  extends: base\n  environment: {B: 2}\n  ports: []\n  command: work\ndb:\n  image: postgres:16');
    const load = ok(loadCompose({ text, variables: {} }));
    const worker = load.stack.services.find((s) => s.name === 'worker')!;
    expect(worker).toMatchObject({ image: 'app:1', environment: { A: '1', B: '2' }, command: ['work'], dependsOn: [] });
    expect(load.stack.services.map((s) => s.name)).toEqual(['db', 'worker']);
  });

  it('leaves services with profiles out, and says so', () => {
    const load = ok(loadCompose({ text: yaml('web:\n  image: nginx:1\ndebug:\n  image: busybox:1\n  profiles: [debug]'), variables: {} }));
    expect(load.stack.services.map((s) => s.name)).toEqual(['web']);
    expect(load.warnings).toContain('service debug: profiles: off: svc runs no profile (debug)');
  });

  it('orders services by depends_on, ties by name, and keeps the conditions', () => {
    const text = yaml(
      'web:\n  image: app:1\n  depends_on:\n    db: {condition: service_healthy}\n    cache: {condition: service_started}\n    migrate: {condition: service_completed_successfully}\n' +
        'migrate:\n  image: app:1\n  depends_on: [db]\ncache:\n  image: redis:7\ndb:\n  image: postgres:16\n  healthcheck: {test: [CMD, pg_isready]}\nadmin:\n  image: adminer:4',
    );
    const load = ok(loadCompose({ text, variables: {} }));
    expect(load.stack.services.map((s) => s.name)).toEqual(['admin', 'cache', 'db', 'migrate', 'web']);
    expect(load.stack.services[4].dependsOn).toEqual([
      { service: 'cache', condition: 'service_started' },
      { service: 'db', condition: 'service_healthy' },
      { service: 'migrate', condition: 'service_completed_successfully' },
    ]);
  });

  it('marks a service waited on with service_completed_successfully as one that runs once, and refuses to route or copy it', () => {
    const text = yaml('web:\n  image: app:1\n  depends_on:\n    migrate: {condition: service_completed_successfully}\nmigrate:\n  image: app:1\n  command: [migrate]\n  stop_grace_period: 1m30s');
    const load = ok(loadCompose({ text, variables: {} }));
    expect(load.stack.services.find((s) => s.name === 'migrate')).toMatchObject({ runsOnce: true, stopGracePeriodMs: 90_000 });
    expect(load.stack.services.find((s) => s.name === 'web')!.runsOnce).toBeUndefined();
    const routed = loadCompose({ text: yaml('web:\n  image: app:1\n  depends_on:\n    migrate: {condition: service_completed_successfully}\nmigrate:\n  image: app:1\n  ports: ["8080:80"]\n  deploy: {replicas: 2}'), variables: {} });
    expect(routed.ok).toBe(false);
    if (!routed.ok) expect(routed.problems.map((p) => `${p.service}:${p.key}`)).toEqual(['migrate:ports', 'migrate:deploy.replicas']);
  });

  it('lists the declared and the anonymous volumes, and the networks with default', () => {
    const load = ok(loadCompose({ text: yaml('web:\n  image: a:1\n  volumes: [data:/d, /tmp/x]\n  networks: [front, back]', 'volumes:\n  data:\nnetworks:\n  front:\n  back:\n'), variables: {} }));
    expect(load.stack).toMatchObject({ volumes: ['data', 'web-anon-1'], networks: ['back', 'default', 'front'] });
    expect(load.stack.services[0].networks).toEqual(['back', 'front']);
  });
});

describe('loadCompose: refusals name the service and the key', () => {
  it.each<[string, string, string[]]>([
    ['privileged', 'privileged: true', ['web:privileged']],
    ['cap_add', 'cap_add: [NET_ADMIN]', ['web:cap_add']],
    ['devices', 'devices: ["/dev/fuse:/dev/fuse"]', ['web:devices']],
    ['network_mode host', 'network_mode: host', ['web:network_mode']],
    ['network_mode service', 'network_mode: "service:db"', ['web:network_mode']],
    ['network_mode container', 'network_mode: "container:abc"', ['web:network_mode']],
    ['pid host', 'pid: host', ['web:pid']],
    ['ipc host', 'ipc: host', ['web:ipc']],
    ['uts host', 'uts: host', ['web:uts']],
    ['userns_mode', 'userns_mode: host', ['web:userns_mode']],
    ['security_opt unconfined', 'security_opt: ["seccomp:unconfined"]', ['web:security_opt[0]']],
    ['use_api_socket', 'use_api_socket: true', ['web:use_api_socket']],
    ['docker socket', 'volumes: ["/var/run/docker.sock:/var/run/docker.sock"]', ['web:volumes[0].source']],
    ['absolute bind', 'volumes: ["/etc:/host-etc:ro"]', ['web:volumes[0].source']],
    ['home bind', 'volumes: ["~/data:/data"]', ['web:volumes[0].source']],
    ['climbing bind', 'volumes: ["../../secrets:/s"]', ['web:volumes[0].source']],
    ['climbing bind long', 'volumes:\n  - {type: bind, source: ./a/../../b, target: /b}', ['web:volumes[0].source']],
    ['undeclared volume', 'volumes: ["nope:/data"]', ['web:volumes[0].source']],
    ['npipe volume', 'volumes:\n  - {type: npipe, source: x, target: /x}', ['web:volumes[0].type']],
    ['extends from a file', 'extends: {file: ../other.yml, service: base}', ['web:extends.file']],
    ['udp port', 'ports: ["53:53/udp"]', ['web:ports[0]']],
    ['published range', 'ports: ["9000-9001:9000-9001"]', ['web:ports[0]']],
    ['unknown extension-free key', 'volumes_from: [db]', ['web:volumes_from']],
    ['external_links', 'external_links: [redis]', ['web:external_links']],
    ['service secrets', 'secrets: [token]', ['web:secrets']],
    ['gpus', 'gpus: all', ['web:gpus']],
    ['build from outside', 'build: ../../elsewhere', ['web:build.context']],
    ['remote build', 'build: https://github.com/a/b.git', ['web:build.context']],
    ['build ssh', 'build: {context: ., ssh: [default]}', ['web:build.ssh']],
    ['env_file outside', 'env_file: /etc/environment', ['web:env_file']],
    ['missing env_file', 'env_file: [./app.env]', ['web:env_file[0]']],
    ['unquoted shell operator', 'command: echo a && echo b', ['web:command']],
    ['svc label prefix', 'labels: {svc.app: evil}', ['web:labels.svc.app']],
    ['bad memory', 'mem_limit: lots', ['web:mem_limit']],
    ['tiny memory', 'deploy: {resources: {limits: {memory: 1m}}}', ['web:deploy.resources.limits.memory']],
    ['bad duration', 'stop_grace_period: soon', ['web:stop_grace_period']],
    ['bad healthcheck interval', 'healthcheck: {test: [CMD, "true"], interval: often}', ['web:healthcheck.interval']],
    ['replicas out of range', 'deploy: {replicas: 99}', ['web:deploy.replicas']],
    ['x-svc unknown key', 'x-svc: {domian: a.example.com}', ['web:x-svc.domian']],
    ['x-svc unknown key of a link', 'x-svc: {links: [{service: db, als: DB}]}', ['web:x-svc.links[0].als']],
    ['x-svc bad domain', 'x-svc: {domain: "not a host", port: 80}', ['web:x-svc.domain']],
    ['x-svc domain without port', 'x-svc: {domain: a.example.com}', ['web:x-svc.port']],
    ['undeclared network', 'networks: [back]', ['web:networks.back']],
    ['reservation devices', 'deploy: {resources: {reservations: {devices: [{capabilities: [gpu]}]}}}', ['web:deploy.resources.reservations.devices']],
    ['a network alias', 'networks:\n  default:\n    aliases: [database]', ['web:networks.default.aliases']],
    ['a link alias', 'links: ["db:database"]', ['web:links[0]']],
    ['a relative tmpfs', 'tmpfs: [/run, cache]', ['web:tmpfs[1]']],
    ['post_start hook', 'post_start: [{command: ./x, privileged: true}]', ['web:post_start']],
  ])('%s', (_name, service, keys) => {
    const p = problems(yaml(`web:\n  image: nginx:1.27\n${service.replace(/^/gm, '  ')}`));
    expect(keysOf(p)).toEqual(keys);
    for (const x of p) expect(x.message.length).toBeGreaterThan(10);
  });

  it.each<[string, string, string[]]>([
    ['secrets from a host file', 'services:\n  web: {image: a:1}\nsecrets:\n  token: {file: ./token.txt}', [':secrets.token.file']],
    ['secrets from the host environment', 'services:\n  web: {image: a:1}\nsecrets:\n  token: {environment: TOKEN}', [':secrets.token.environment']],
    ['configs from a host file', 'services:\n  web: {image: a:1}\nconfigs:\n  conf: {file: /etc/app.conf}', [':configs.conf.file']],
    ['external volume', 'services:\n  web: {image: a:1}\nvolumes:\n  data: {external: true}', [':volumes.data.external']],
    ['volume driver options', 'services:\n  web: {image: a:1}\nvolumes:\n  data: {driver_opts: {type: none, o: bind, device: /srv}}', [':volumes.data.driver_opts']],
    ['external network', 'services:\n  web: {image: a:1}\nnetworks:\n  edge: {external: true}', [':networks.edge.external']],
    ['include', 'include: [other.yml]\nservices:\n  web: {image: a:1}', [':include']],
    ['a key Compose does not know', 'services:\n  web: {image: a:1, imagee: b}', ['web:imagee']],
    ['a service name svc cannot use', 'services:\n  Web.App: {image: a:1}', ['Web.App:services']],
    ['an image the engine refuses', 'services:\n  web: {image: "nginx/UPPER:1"}', ['web:image']],
    ['no image nor build', 'services:\n  web: {restart: always}', ['web:image']],
    ['a dependency that does not exist', 'services:\n  web: {image: a:1, depends_on: [db]}', ['web:depends_on.db']],
    ['a dependency under a profile', 'services:\n  web: {image: a:1, depends_on: [db]}\n  db: {image: b:1, profiles: [x]}', ['web:depends_on.db']],
    ['service_healthy without a healthcheck', 'services:\n  web: {image: a:1, depends_on: {db: {condition: service_healthy}}}\n  db: {image: b:1}', ['web:depends_on.db.condition']],
    ['a dependency cycle', 'services:\n  a: {image: a:1, depends_on: [b]}\n  b: {image: b:1, depends_on: [c]}\n  c: {image: c:1, depends_on: [a]}', ['a:depends_on']],
    ['an extends cycle', 'services:\n  a: {image: a:1, extends: b}\n  b: {image: b:1, extends: a}', ['b:extends']],
    ['the same published port twice', 'services:\n  a: {image: a:1, ports: ["80:80"]}\n  b: {image: b:1, ports: ["80:8080"]}', ['b:ports']],
    ['the same domain twice', 'services:\n  a: {image: a:1, x-svc: {domain: a.example.com, port: 80}}\n  b: {image: b:1, x-svc: {domain: a.example.com, port: 80}}', ['b:x-svc.domain']],
    ['a required variable', 'services:\n  web: {image: "a:${TAG:?set TAG}"}', ['web:image']],
    ['bad interpolation', 'services:\n  web: {image: a:1, command: "${oops"}', ['web:command']],
    ['a schema type error', 'services:\n  web: {image: a:1, init: [1]}', ['web:init']],
    ['YAML that does not parse', 'services:\n  web: [\n', [':yaml']],
    ['duplicate keys', 'services:\n  web: {image: a:1}\n  web: {image: b:1}', [':yaml']],
    ['no service runs', 'services:\n  web: {image: a:1, profiles: [x]}', [':services']],
    ['not a mapping', '- a\n- b', [':yaml']],
  ])('%s', (_name, text, keys) => {
    expect(keysOf(problems(text))).toEqual(keys);
  });

  it('warns, never silently, about what it ignores', () => {
    const load = ok(loadCompose({ text: yaml('web:\n  image: a:1\n  container_name: my-web\n  hostname: web\n  logging: {driver: json-file}\n  ports: ["3000", "127.0.0.1:9000:9000"]\n  x-other: 1'), variables: {} }));
    expect(load.warnings).toEqual([
      'service web: container_name: ignored: svc names the containers itself (one per replica and per deploy colour)',
      'service web: hostname: ignored: services reach each other by their Compose names on the stack network',
      "service web: logging: ignored: svc collects every container's logs itself",
      'service web: ports[0]: port 3000 has no published port: reachable inside the stack only',
      'service web: ports[1]: bound to 127.0.0.1: kept inside the stack, not routed',
      'service web: x-other: an extension key svc does not read',
    ]);
  });
});
