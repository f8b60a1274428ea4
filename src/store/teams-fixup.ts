// Data fix-up for installs older than teams (docs/api.md "Teams"), run at every open after the migrations
// (which are schema-only): the account that set svc up becomes an owner, and tokens made before scopes keep
// what they could do, `admin`. Idempotent: once there is an owner and no token without scopes, it does nothing.
import type { Db } from './db.js';

export function teamsFixup(db: Db): void {
  const c = db.$client;
  c.transaction(() => {
    const owners = c.prepare("SELECT count(*) AS n FROM users WHERE role = 'owner'").get() as { n: number };
    if (owners.n === 0) c.prepare("UPDATE users SET role = 'owner' WHERE id = (SELECT min(id) FROM users)").run();
    c.prepare(`UPDATE api_tokens SET scopes = '["admin"]' WHERE scopes IS NULL`).run();
  })();
}
