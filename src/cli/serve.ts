// `svc serve`: load the configuration and run the daemon until SIGTERM/SIGINT. The daemon's modules are
// imported only here, so every other command starts fast and never touches the data directory.
import { loadConfig, ConfigError } from '../config.js';
import { createLogger } from '../log.js';
import { EncryptionKeyError } from '../store/encryption-check.js';
import { installProcessGuard } from '../process-guard.js';
import { networkInterfaces } from 'node:os';
import { readyLine } from './open-url.js';

export async function serveCommand(): Promise<void> {
  const boot = createLogger('info');
  let config;
  try {
    config = loadConfig({ log: (m) => boot.warn(m) });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  installProcessGuard({ log });
  const { startDaemon } = await import('../main.js');
  let daemon;
  try {
    daemon = await startDaemon(config, log);
  } catch (err) {
    process.stderr.write(`svc: ${err instanceof EncryptionKeyError ? '' : 'could not start: '}${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof EncryptionKeyError ? 2 : 1);
  }
  const { setupRequired } = await import('../store/users.js');
  const port = Number(new URL(daemon.url).port);
  const externalIps = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
  process.stdout.write(readyLine({ publicUrl: config.publicUrl, host: config.host, port, externalIps, setupRequired: setupRequired(daemon.db) }));
  const shutdown = (signal: string) => {
    log.info('signal received', { signal });
    daemon.stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
