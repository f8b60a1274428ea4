// bench:webhooks. (1) 10,000 forged or replayed deliveries and 100 valid ones, 16 at a time, while a
// deploy runs: accepted forgeries (must be 0) and acknowledgement latency. (2) push -> new version
// serving for a cached rebuild of a one-file static site, with the time of each step (SSE arrival).
// A throw-away daemon (test support), bounded; run once: `npm run bench:webhooks [-- --forged 10000]`.
import { randomBytes } from 'node:crypto';
import { signBody } from '../src/codehost/signature.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { silentLogger } from '../src/log.js';
import { startTestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../test/support/images.js';
import { ensureCaddyImage } from '../test/support/caddy-image.js';
import { createTestRepo } from '../test/support/git-repo.js';
import { freePort } from '../test/support/caddy.js';
import { firstAnswer, loadAvg, log, ms, numFlag, pct, runMain, secs, traceDeploy } from './common.js';

const SECRET = randomBytes(16).toString('hex');

runMain(async () => {
  const forged = numFlag('forged', 10_000, 100, 10_000);
  const runtime = createDockerRuntime({ log: silentLogger });
  await ensureTestImages(runtime);
  const t = await startTestDaemon('bench-wh', { SVC_CODEHOST_WEBHOOK_SECRET: SECRET, SVC_BUILD_IMAGE_STATIC: await ensureCaddyImage() });
  const repo = await createTestRepo('acme/whb-site');
  try {
    const post = async (event: string, body: string, headers: Record<string, string>) => {
      const t0 = performance.now();
      const res = await fetch(`${t.url}/api/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': event, ...headers }, body });
      const json = (await res.json()) as Record<string, unknown>;
      return { status: res.status, json, ms: performance.now() - t0 };
    };

    // Part 1: a deploy in progress, then the flood.
    const web = await t.api('POST', '/api/apps', { name: 'whb-web', image_ref: WEB_V1, internal_port: 3000, fallback_port: await freePort(), repo_url: 'https://github.com/acme/whb-web' });
    await t.api('POST', `/api/apps/${web.body.id}/deploys`, {});
    const run = (sha: string) => JSON.stringify({ action: 'completed', workflow_run: { conclusion: 'success', head_sha: sha, head_branch: 'main', event: 'push', head_repository: { full_name: 'acme/whb-web' } }, repository: { full_name: 'acme/whb-web' } });
    const captured = run('a'.repeat(40));
    const capturedSig = signBody(SECRET, captured);
    await post('workflow_run', captured, { 'x-github-delivery': 'captured', 'x-hub-signature-256': capturedSig });
    const jobs: (() => Promise<{ kind: string; status: number; json: Record<string, unknown>; ms: number }>)[] = [];
    for (let i = 0; i < forged; i++) {
      const kind = i % 3;
      if (kind === 0) jobs.push(async () => ({ kind: 'forged', ...(await post('workflow_run', run(randomBytes(20).toString('hex')), { 'x-github-delivery': `f${i}`, 'x-hub-signature-256': signBody('guess', captured) })) }));
      else if (kind === 1) jobs.push(async () => ({ kind: 'unsigned', ...(await post('workflow_run', captured, { 'x-github-delivery': `u${i}` })) }));
      else jobs.push(async () => ({ kind: 'replayed', ...(await post('workflow_run', captured, { 'x-github-delivery': 'captured', 'x-hub-signature-256': capturedSig })) }));
      if (i % (forged / 100) === 0) {
        const sha = randomBytes(20).toString('hex');
        const body = run(sha);
        jobs.push(async () => ({ kind: 'valid', ...(await post('workflow_run', body, { 'x-github-delivery': `v${i}`, 'x-hub-signature-256': signBody(SECRET, body) })) }));
      }
    }
    const results: Awaited<ReturnType<(typeof jobs)[number]>>[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < jobs.length) results.push(await jobs[next++]());
    }));
    const wall = performance.now() - started;
    const bad = results.filter((r) => r.kind !== 'valid');
    const acceptedForgeries = bad.filter((r) => r.status === 202 || (r.status === 200 && !r.json.duplicate)).length;
    const valid = results.filter((r) => r.kind === 'valid');
    const lat = results.map((r) => r.ms);
    console.log(`deliveries: ${bad.length} forged/unsigned/replayed + ${valid.length} valid in ${secs(wall)} (16 at a time, a deploy running); ${await loadAvg()}`);
    console.log(`accepted forgeries: ${acceptedForgeries}; valid accepted (202): ${valid.filter((r) => r.status === 202).length}/${valid.length}`);
    console.log(`ack latency: p50 ${ms(pct(lat, 50))}, p99 ${ms(pct(lat, 99))}, max ${ms(Math.max(...lat))}; valid p99 ${ms(pct(valid.map((r) => r.ms), 99))}`);

    // Part 2: push -> serving, cached rebuild of a one-file static site.
    const port = await freePort();
    await t.api('POST', '/api/apps', { name: 'whb-site', build_mode: 'svc_build', repo_url: repo.url, fallback_port: port });
    const pushAndTrace = async (content: string) => {
      const sha = await repo.commit({ 'index.html': content });
      const body = JSON.stringify({ ref: 'refs/heads/main', after: sha, repository: { full_name: 'acme/whb-site' } });
      const t0 = performance.now();
      const wall0 = Date.now();
      const res = await post('push', body, { 'x-github-delivery': `p-${sha}`, 'x-hub-signature-256': signBody(SECRET, body) });
      const id = (res.json.deploys as number[])[0];
      const [trace, servedMs] = await Promise.all([
        traceDeploy(t.url, t.token, id, 120_000),
        firstAnswer(port, (r) => r.text.includes(content), 120_000).then((at) => at - wall0),
      ]);
      return { t0, trace, servedMs, ackMs: res.ms };
    };
    await pushAndTrace(`<h1>warm ${Date.now()}</h1>`);
    const { t0, trace, servedMs, ackMs } = await pushAndTrace(`<h1>cached ${Date.now()}</h1>`);
    const steps: string[] = [];
    let prev = t0;
    for (const e of trace.events) {
      if (steps.length && steps[steps.length - 1].startsWith(`${e.step} `) && e.at - prev < 1) continue;
      steps.push(`${e.step} +${ms(e.at - prev)}`);
      prev = e.at;
    }
    console.log(`push -> serving (cached rebuild, one-file static site): ${ms(servedMs)} (ack ${ms(ackMs)}, deploy done at ${ms(trace.doneAt - t0)}, ${trace.status})`);
    console.log(`steps (SSE arrival, from the push): ${steps.join(', ')}`);
  } finally {
    await t.close();
    await repo.remove();
    const imgs = await runtime.docker.listImages({ filters: { reference: ['svc-build/whb-site'] } });
    for (const i of imgs) await runtime.docker.getImage(i.Id).remove({ force: true }).catch(() => {});
  }
});
