// How a redis service is carried across a major (issue 33): the new server replicates from the old one
// (the RDB the old one streams, the way redis moves its data between servers and versions), then leaves
// replication and takes writes. Writes to the old one are refused from the freeze (min-replicas-to-write
// above any replica count it can have: NOREPLICAS, reads still served) until the switch.
import type { Credentials, ExecCommand, UpgradeOps } from './catalog.js';

const PORT = 6379;
/** The password goes through REDISCLI_AUTH (redis-cli reads it; never argv). */
const cli = (c: Credentials, args: string[]): ExecCommand => ({ cmd: ['redis-cli', '-h', '127.0.0.1', '-p', String(PORT), ...args], env: { REDISCLI_AUTH: c.password } });
const sh = (c: Credentials, script: string, ...args: string[]): ExecCommand => ({ cmd: ['sh', '-c', script, 'svc-redis', ...args], env: { REDISCLI_AUTH: c.password } });

/**
 * Every key without an expiry, per database: `keys <count> <sha1>`, the sha1 of the sorted sha1s of each
 * key's name, type and value (members sorted where redis keeps no order, scores printed one way), so two
 * servers of different versions and encodings agree on equal data. Keys with an expiry are left out: a
 * cache's key may expire between the two readings, and a key that expires is one the app can lose.
 * A read-only script (EVAL_RO), so it runs on the frozen old side too.
 */
export const REDIS_SUM_SCRIPT = `local out = {}
local n = 0
for _, k in ipairs(redis.call('KEYS', '*')) do
  if redis.call('PTTL', k) == -1 then
    local t = redis.call('TYPE', k)['ok']
    local v = {}
    if t == 'string' then v = {redis.call('GET', k)}
    elseif t == 'list' then v = redis.call('LRANGE', k, 0, -1)
    elseif t == 'set' then v = redis.call('SMEMBERS', k); table.sort(v)
    elseif t == 'hash' then
      local h = redis.call('HGETALL', k)
      for i = 1, #h, 2 do v[#v + 1] = h[i] .. '\\0' .. h[i + 1] end
      table.sort(v)
    elseif t == 'zset' then
      local z = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
      for i = 1, #z, 2 do v[#v + 1] = z[i] .. '\\0' .. string.format('%.17g', tonumber(z[i + 1])) end
    elseif t == 'stream' then
      for _, e in ipairs(redis.call('XRANGE', k, '-', '+')) do v[#v + 1] = e[1] .. '\\0' .. table.concat(e[2], '\\0') end
    end
    n = n + 1
    out[n] = redis.sha1hex(k .. '\\0' .. t .. '\\0' .. table.concat(v, '\\0'))
  end
end
table.sort(out)
return 'keys ' .. n .. ' ' .. redis.sha1hex(table.concat(out))`;

// redis-cli exits 0 on an error reply, so every answer is checked: `ok` wants OK, `answer` anything but
// an error (an integer, a script's result).
const CHECKS = `ok() { r=$(redis-cli "$@"); [ "$r" = OK ] || { echo "svc: redis-cli $1 $2 failed: $r" >&2; exit 1; }; }
answer() { r=$(redis-cli "$@"); case "$r" in ERR*|WRONGPASS*|NOAUTH*|NOSCRIPT*|BUSY*|LOADING*|'') echo "svc: redis-cli $1 failed: $r" >&2; exit 1;; esac; printf '%s\\n' "$r"; }
`;
// Refused writes, the apps' connections ended (they reconnect and read), and no wait before the RDB is
// streamed to the new replica (the default waits 5 s for more replicas to share it).
const FREEZE = `${CHECKS}ok CONFIG SET min-replicas-to-write 1000000 && ok CONFIG SET repl-diskless-sync-delay 0 && answer CLIENT KILL TYPE normal SKIPME yes >/dev/null && answer CLIENT KILL TYPE pubsub SKIPME yes >/dev/null`;
const UNFREEZE = `${CHECKS}ok CONFIG SET min-replicas-to-write 0 && ok CONFIG SET repl-diskless-sync-delay 5`;
/** Bounded waits inside the container (0.2 s polls, 10 minutes): the sync, then the new server's AOF rewrite of it. */
export const REDIS_SYNC_POLLS = 3000;
/** Replicates once from "$1" (masterauth already set), waiting for the sync, then leaves replication. */
const REPLICATE_ONCE = `ok REPLICAOF "$1" ${PORT}
i=0
until redis-cli INFO replication | grep -q '^master_link_status:up'; do
  i=$((i+1)); if [ $i -gt ${REDIS_SYNC_POLLS} ]; then echo "svc: the replication from $1 failed: no sync in 10 minutes" >&2; exit 1; fi; sleep 0.2
done
ok REPLICAOF NO ONE
`;
const MOVE = `set -e
${CHECKS}printf 'CONFIG SET masterauth %s\\n' "$REDISCLI_AUTH" | redis-cli | grep -qx OK || { echo "svc: setting masterauth failed" >&2; exit 1; }
${REPLICATE_ONCE}i=0
until redis-cli INFO persistence | grep -q '^aof_rewrite_in_progress:0' && redis-cli INFO persistence | grep -q '^aof_rewrite_scheduled:0'; do
  i=$((i+1)); if [ $i -gt ${REDIS_SYNC_POLLS} ]; then echo "svc: the AOF rewrite failed: not done in 10 minutes" >&2; exit 1; fi; sleep 0.2
done`;

/**
 * A preview's copy (issue 33 section 4), run in the copy's container: it replicates once from the parent
 * (whose password, SVC_SOURCE_AUTH, is given to the copy's server through redis-cli's stdin and taken back
 * after), then leaves replication. A parent whose dataset is over $2 bytes is not copied.
 */
const COPY_FROM = `set -e
${CHECKS}used=$(REDISCLI_AUTH="$SVC_SOURCE_AUTH" redis-cli -h "$1" -p ${PORT} INFO memory | sed -n 's/^used_memory_dataset:\\([0-9]*\\).*/\\1/p')
[ -n "$used" ] || { echo "svc: reading the parent's memory failed" >&2; exit 1; }
[ "$used" -le "$2" ] || { echo "svc: the parent's dataset is $used bytes, over the copy limit of $2" >&2; exit 3; }
printf 'CONFIG SET masterauth %s\\n' "$SVC_SOURCE_AUTH" | redis-cli | grep -qx OK || { echo "svc: setting masterauth failed" >&2; exit 1; }
${REPLICATE_ONCE}ok CONFIG SET masterauth ''
echo "$used"`;

export const redisCopyFrom = (c: Credentials, source: Credentials, sourceHost: string, maxBytes: number): ExecCommand => ({
  cmd: ['sh', '-c', COPY_FROM, 'svc-redis', sourceHost, String(maxBytes)],
  env: { REDISCLI_AUTH: c.password, SVC_SOURCE_AUTH: source.password },
});

export const redisUpgrade: UpgradeOps = {
  freeze: (c) => sh(c, FREEZE),
  unfreeze: (c) => sh(c, UNFREEZE),
  // The host is a validated container name, passed as $1, never spliced into the script.
  move: (c, fromHost) => sh(c, MOVE, fromHost),
  expectedLoadErrors: () => [],
  // The databases that hold keys (`db0`, `db3`), from INFO keyspace.
  databases: (c) => sh(c, "redis-cli INFO keyspace | sed -n 's/^\\(db[0-9]*\\):.*/\\1/p'"),
  // The script's answer is checked: two sides failing alike must not look equal.
  tableSums: (c, database) => sh(c, `${CHECKS}answer -n "$1" EVAL_RO "$2" 0`, database.replace(/^db/, ''), REDIS_SUM_SCRIPT),
};
