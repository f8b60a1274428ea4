#!/usr/bin/env node
// `svc serve | apply | diff | get | backup | restore | token`. Only `serve` runs the daemon; the other
// commands are thin clients of the REST API.
import { loadConfig, ConfigError } from './config.js';
import { createLogger } from './log.js';
import { startDaemon } from './main.js';
import { EncryptionKeyError } from './store/encryption-check.js';
import { installProcessGuard } from './process-guard.js';

async function serveCommand() {
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
  let daemon;
  try {
    daemon = await startDaemon(config, log);
  } catch (err) {
    process.stderr.write(`svc: ${err instanceof EncryptionKeyError ? '' : 'could not start: '}${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof EncryptionKeyError ? 2 : 1);
  }
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

const [command = 'serve'] = process.argv.slice(2);
switch (command) {
  case 'serve':
    await serveCommand();
    break;
  default:
    process.stderr.write(`svc: unknown command "${command}". Commands: serve\n`);
    process.exit(2);
}
