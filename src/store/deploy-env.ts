// The environment a deploy gives its container: linked-service variables, then the app's own variables
// on top (an app may override an injected name on purpose). Also every value that must be redacted from
// events and logs: secret app variables and all service credentials.
import type { Sealer } from '../crypto.js';
import type { Db } from './db.js';
import { listEnv, resolveEnv } from './env.js';
import { linkedServiceEnv } from './links.js';

export function deployEnv(db: Db, sealer: Sealer, appId: number): { env: Record<string, string>; secrets: string[] } {
  const linked = linkedServiceEnv(db, sealer, appId);
  const own = resolveEnv(db, sealer, appId);
  const secretKeys = listEnv(db, appId).filter((v) => v.isSecret).map((v) => v.key);
  return {
    env: { ...linked, ...own },
    secrets: [...Object.values(linked), ...secretKeys.map((k) => own[k]).filter((v): v is string => Boolean(v))],
  };
}
