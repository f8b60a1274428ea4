// bench:previews (issue 20): N pull requests of a static site opened, served and closed one after the other
// on a throw-away daemon: open -> preview serving its commit (cached static build; goal < 5 s), close ->
// nothing left (containers, built images, rows, listener; goal < 10 s), and the orphans of any kind after
// all cycles (goal 0). Bounded; `npm run bench:previews [-- --cycles 100]`.
import { randomBytes } from 'node:crypto';
import { signBody } from '../src/codehost/signature.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { LABELS } from '../src/runtime/runtime.js';
import { silentLogger } from '../src/log.js';
import { startTestDaemon } from '../test/support/daemon.js';
import { ensureTestImages } from '../test/support/images.js';
import { ensureCaddyImage } from '../test/support/caddy-image.js';
import { createTestRepo } from '../test/support/git-repo.js';
import { freePort } from '../test/support/caddy.js';
import { httpText, loadAvg, log, numFlag, pct, runMain, secs, sleep } from './common.js';

const SECRET = randomBytes(16).toString('hex');

runMain(async () => {
  const cycles = numFlag('cycles', 20, 1, 100);
  const runtime = createDockerRuntime({ log: silentLogger });
  await ensureTestImages(runtime);
  const port = await freePort();
  const t = await startTestDaemon('bench-pv', { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_BUILD_IMAGE_STATIC: await ensureCaddyImage(), SVC_PREVIEW_PORTS: `${port}` });
  const repo = await createTestRepo('acme/bpv-site');
  const until = async (what: string, ok: () => Promise<boolean>, maxMs: number) => {
    const end = Date.now() + maxMs;
    while (!(await ok())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  };
  const deliver = (action: string, number: number, sha: string) => {
    const body = JSON.stringify({ action, number, repository: { full_name: 'acme/bpv-site' }, pull_request: { head: { sha, ref: `pr-${number}`, repo: { full_name: 'acme/bpv-site' } }, base: { ref: 'main' } } });
    return fetch(`${t.url}/api/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': `${action}-${number}`, 'x-hub-signature-256': signBody(SECRET, body) }, body });
  };
  const leftovers = async (name: string) => ({
    containers: (await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: t.instance, [LABELS.app]: name })).length,
    images: (await runtime.listImageTags(`svc-build/${name}`)).length,
    rows: ((await t.api('GET', '/api/apps')).body as { name: string }[]).filter((a) => a.name === name).length,
    listening: (await httpText(`http://127.0.0.1:${port}/`, 500)) !== undefined ? 1 : 0,
  });
  const openMs: number[] = [];
  const closeMs: number[] = [];
  try {
    await repo.commit({ 'index.html': 'production' });
    await t.api('POST', '/api/apps', { name: 'bpv-site', build_mode: 'svc_build', repo_url: repo.url, access_mode: 'port', fallback_port: await freePort(), previews: { enabled: true } });
    for (let n = 1; n <= cycles; n++) {
      const name = `bpv-site-pr-${n}`;
      const sha = await repo.commit({ 'index.html': `pull request ${n}` }, `pr-${n}`);
      let t0 = performance.now();
      if ((await deliver('opened', n, sha)).status !== 202) throw new Error(`opened ${n} was not accepted`);
      await until(`${name} serving`, async () => (await httpText(`http://127.0.0.1:${port}/`, 1000))?.text.includes(`pull request ${n}`) ?? false, 60_000);
      openMs.push(performance.now() - t0);
      t0 = performance.now();
      if ((await deliver('closed', n, sha)).status !== 202) throw new Error(`closed ${n} was not accepted`);
      await until(`${name} gone`, async () => Object.values(await leftovers(name)).every((v) => v === 0), 30_000);
      closeMs.push(performance.now() - t0);
      if (n % 10 === 0) log(`${n}/${cycles} cycles`);
    }
    const orphans = { containers: 0, images: 0, rows: 0, listening: 0 };
    for (let n = 1; n <= cycles; n++) for (const [k, v] of Object.entries(await leftovers(`bpv-site-pr-${n}`))) orphans[k as keyof typeof orphans] += v;
    console.log(`bench:previews, ${cycles} open/close cycles of a static site (cached build), load ${await loadAvg()}`);
    console.log(`  open -> serving its commit: median ${secs(pct(openMs, 50))}, p95 ${secs(pct(openMs, 95))}, max ${secs(Math.max(...openMs))} (goal < 5 s)`);
    console.log(`  close -> nothing left:      median ${secs(pct(closeMs, 50))}, p95 ${secs(pct(closeMs, 95))}, max ${secs(Math.max(...closeMs))} (goal < 10 s)`);
    console.log(`  orphans after all cycles: ${JSON.stringify(orphans)} (goal all 0)`);
  } finally {
    await t.close();
    await repo.remove();
    for (let n = 1; n <= cycles; n++) for (const tag of await runtime.listImageTags(`svc-build/bpv-site-pr-${n}`).catch(() => [] as string[])) await runtime.removeImage(tag).catch(() => false);
  }
});
