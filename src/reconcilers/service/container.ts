// The container of a service, derived from its row and credentials: name, image, env or command from the
// catalog, the data dir mounted at the engine's data path, the labels that say it is ours, the network with
// its name as alias. Also writes the files the catalog asks for (garage.toml) before the container starts.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataPathOf, type Credentials, type ServiceKind, type ServicePlace } from '../../catalog/catalog.js';
import { LABELS, type ContainerSpec } from '../../runtime/runtime.js';
import type { ServiceRow } from '../../store/schema/services.js';

export const placeOf = (row: Pick<ServiceRow, 'name' | 'containerName' | 'dataDir'>): ServicePlace => ({
  name: row.name,
  host: row.containerName,
  dataDir: row.dataDir,
});

/** Labels of a service container; `svc.instance` keeps two daemons (or tests) on one engine apart. */
export const serviceLabels = (instance: string, name: string): Record<string, string> => ({
  [LABELS.managed]: 'true',
  [LABELS.instance]: instance,
  [LABELS.role]: 'service',
  [LABELS.service]: name,
});

/** The container spec of a service (pure). */
export function serviceSpec(row: ServiceRow, kind: ServiceKind, creds: Credentials, settings: { network: string; instance: string }): ContainerSpec {
  const cfg = kind.container(creds, placeOf(row), row.version ?? undefined);
  return {
    name: row.containerName,
    image: row.imageRef,
    env: cfg.env,
    cmd: cfg.cmd,
    labels: serviceLabels(settings.instance, row.name),
    network: settings.network,
    networkAliases: [row.containerName],
    mounts: [{ source: row.dataDir, target: dataPathOf(kind, row.version) }, ...(cfg.extraMounts ?? [])],
    restart: 'no',
  };
}

/** Creates the data dir if it went missing and (re)writes the catalog's files into it (idempotent). */
export function prepareDataDir(row: ServiceRow, kind: ServiceKind, creds: Credentials): void {
  mkdirSync(row.dataDir, { recursive: true, mode: 0o700 });
  for (const f of kind.files?.(creds) ?? []) {
    const path = join(row.dataDir, f.path);
    writeFileSync(path, f.content, { mode: f.mode });
    chmodSync(path, f.mode);
  }
}
