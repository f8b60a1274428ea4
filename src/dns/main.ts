// Entry point of the DNS responder process: `node dist/dns/main.js --state <file> --port <n> [--host <ip>]`.
// Started detached by the daemon (state.ts) so it outlives daemon restarts, upgrades and crashes: the
// data plane must not depend on the daemon. Logs one JSON object per line on stdout.
import { startResponder } from './responder.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', component: 'dns-responder', msg, ...fields }) + '\n');

const stateFile = arg('state');
const port = Number(arg('port'));
if (!stateFile || !Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write('usage: main.js --state <file> --port <n> [--host <ip>]\n');
  process.exit(2);
}

try {
  const r = await startResponder({ stateFile, port, host: arg('host'), log });
  log('listening', { port: r.port, stateFile, pid: process.pid });
  const stop = (signal: string) => {
    log('stopping', { signal });
    void r.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {}); // the daemon's terminal going away is not a reason to stop
} catch (err) {
  log('cannot start', { error: String(err) });
  process.exit(1);
}
