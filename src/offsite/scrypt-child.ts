// scrypt for the passphrase stanza, run in a short-lived child node process: at age's work factor 2^18
// scrypt needs 256 MiB by design, and this way the daemon never holds them (its peak stays the stream's,
// bench:offsite); the child returns every byte to the OS when it exits. The passphrase goes over stdin,
// never argv (visible in `ps`). Native OpenSSL scrypt, so ~1 s, not the library's ~5 s of JS.
import { spawn } from 'node:child_process';

const CODE = `
const c = require('node:crypto');
let s = '';
process.stdin.setEncoding('utf8').on('data', (d) => (s += d)).on('end', () => {
  const o = JSON.parse(s);
  c.scrypt(o.p, Buffer.from(o.s, 'base64'), 32, { N: 2 ** o.n, r: 8, p: 1, maxmem: 2 ** o.n * 1024 + 2 ** 24 }, (e, k) => {
    if (e) { process.stderr.write(e.message); process.exit(1); }
    process.stdout.write(k.toString('base64'));
  });
});`;

/** scrypt(passphrase, salt, N = 2^logN, r = 8, p = 1) to 32 bytes, in a child process. */
export function scryptInChild(passphrase: string, salt: Buffer, logN: number, timeoutMs = 120_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', CODE], { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
    let out = '';
    let err = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const key = Buffer.from(out, 'base64');
      if (code === 0 && key.length === 32) resolve(key);
      else reject(new Error(`scrypt child failed (${signal ?? `exit ${code}`}): ${err.slice(0, 200)}`));
    });
    p.stdin.on('error', () => {}); // a child that died early answers through 'close'
    p.stdin.end(JSON.stringify({ p: passphrase, s: salt.toString('base64'), n: logN }));
  });
}
