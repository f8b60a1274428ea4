#!/usr/bin/env node
// svc-test stand-in for Garage v1.0.x (dxflrs/garage:v1.0.1), for tests and CI without a registry.
// Plain Node.js (>= 18), no dependencies. Installed in the image as /garage; `/garage server` runs it.
//
// Kept from Garage:
//   - config file /etc/garage.toml (or -c PATH / GARAGE_CONFIG_FILE): metadata_dir, data_dir,
//     [s3_api] api_bind_addr (default [::]:3900), s3_region (default garage), root_domain,
//     [admin] api_bind_addr (default [::]:3903), admin_token, metrics_token;
//   - admin API v1 on the admin port with `Authorization: Bearer <admin_token>`:
//     GET /health, GET /metrics, GET /v1/status, GET /v1/health, GET /v1/layout, POST /v1/layout,
//     POST /v1/layout/apply, POST /v1/layout/revert, GET/POST /v1/key (list/create),
//     GET /v1/key?id=|search=[&showSecretKey=true], POST /v1/key?id= (update), DELETE /v1/key?id=,
//     POST /v1/key/import, GET /v1/bucket (list), GET /v1/bucket?id=|globalAlias=, POST /v1/bucket,
//     DELETE /v1/bucket?id=, POST /v1/bucket/allow, POST /v1/bucket/deny,
//     PUT/DELETE /v1/bucket/alias/global?id=&alias=;
//   - S3 API on the S3 port, AWS Signature V4 (header or presigned query) checked against keys
//     created through the admin API, with per-bucket read/write grants: ListBuckets, HeadBucket,
//     ListObjectsV2 (prefix, delimiter, max-keys, continuation-token, start-after), PutObject,
//     GetObject (with Range), HeadObject, DeleteObject, multipart upload (create, upload part, complete,
//     abort, list uploads); aws-chunked bodies are decoded.
//   - test faults (not Garage): POST /v1/svc-test/faults {"corruptNextGet": true} (flips a byte of the next
//     whole-object GET) or {"corruptNextWrite": true} (the next PutObject / UploadPart stores a byte flipped
//     after the checksum check: a store that damages what it was sent) or {"refuseParts": true} (every
//     UploadPart is answered 400 InvalidRequest until set false: a store that refuses a part mid-upload)
//     on the admin API;
//   - S3 additional checksums, SHA-256 only, when `[s3_api] checksums = true` (not Garage v1, which has
//     none; what AWS S3 and MinIO do): an x-amz-checksum-sha256 header on PutObject / UploadPart is checked
//     (400 BadDigest), the checksum is kept (a COMPOSITE one for multipart: SHA-256 of the parts' digests,
//     `-N`, computed from the parts as stored) and reported on HEAD/GET with `x-amz-checksum-mode: ENABLED`
//     and in the CompleteMultipartUpload result;
//   - state persists in metadata_dir (JSON, atomic rename), object bytes in data_dir.
// Not Garage: GET /health is also answered on the S3 port (svc's readiness check); no RPC (3901),
// no web endpoint (3902), no copy, no K2V, single node only.
'use strict';

const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const os = require('node:os');

const VERSION = 'v1.0.1-svc-test-standin';

// ---------------------------------------------------------------------------------------------
// Minimal TOML reader: [tables], key = "string" | 'literal' | number | bool | [array of scalars].
function parseToml(text) {
  const root = {};
  let table = root;
  const lines = text.split(/\r?\n/);
  for (let raw of lines) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    let m = /^\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]$/.exec(line);
    if (m) {
      const parent = walk(root, m[1].split('.').slice(0, -1));
      const last = m[1].split('.').pop();
      if (!Array.isArray(parent[last])) parent[last] = [];
      table = {};
      parent[last].push(table);
      continue;
    }
    m = /^\[\s*([A-Za-z0-9_.-]+)\s*\]$/.exec(line);
    if (m) {
      table = walk(root, m[1].split('.'));
      continue;
    }
    m = /^([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(.+)$/.exec(line);
    if (!m) throw new Error(`garage.toml: cannot parse line: ${raw}`);
    table[m[1].replace(/^"|"$/g, '')] = parseValue(m[2].trim());
  }
  return root;
}
function walk(obj, keys) {
  for (const k of keys) {
    if (typeof obj[k] !== 'object' || obj[k] === null) obj[k] = {};
    obj = obj[k];
  }
  return obj;
}
function stripComment(line) {
  let q = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (q) {
      if (c === '\\' && q === '"') i++;
      else if (c === q) q = null;
    } else if (c === '"' || c === "'") q = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}
function parseValue(v) {
  if (v.startsWith('"')) return JSON.parse(v);
  if (v.startsWith("'")) return v.slice(1, v.lastIndexOf("'"));
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v.startsWith('[')) {
    const inner = v.slice(1, v.lastIndexOf(']')).trim();
    if (!inner) return [];
    const items = [];
    let cur = '';
    let q = null;
    for (const c of inner) {
      if (q) { cur += c; if (c === q) q = null; continue; }
      if (c === '"' || c === "'") { q = c; cur += c; continue; }
      if (c === ',') { if (cur.trim()) items.push(parseValue(cur.trim())); cur = ''; continue; }
      cur += c;
    }
    if (cur.trim()) items.push(parseValue(cur.trim()));
    return items;
  }
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isNaN(n)) return n;
  return v;
}

// ---------------------------------------------------------------------------------------------
// Configuration
function parseArgs(argv) {
  let configPath = process.env.GARAGE_CONFIG_FILE || '/etc/garage.toml';
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-c' || a === '--config') configPath = argv[++i];
    else if (a.startsWith('--config=')) configPath = a.slice('--config='.length);
    else rest.push(a);
  }
  return { configPath, rest };
}

function loadConfig(configPath) {
  const cfg = parseToml(fs.readFileSync(configPath, 'utf8'));
  const dataDir = Array.isArray(cfg.data_dir) ? cfg.data_dir[0] && cfg.data_dir[0].path : cfg.data_dir;
  if (!cfg.metadata_dir) throw new Error('garage.toml: metadata_dir is required');
  if (!dataDir) throw new Error('garage.toml: data_dir is required');
  const s3 = cfg.s3_api || {};
  const admin = cfg.admin || {};
  return {
    metadataDir: cfg.metadata_dir,
    dataDir,
    s3Bind: s3.api_bind_addr || '[::]:3900',
    region: s3.s3_region || 'garage',
    rootDomain: s3.root_domain || null,
    checksums: s3.checksums === true,
    adminBind: admin.api_bind_addr || '[::]:3903',
    adminToken: admin.admin_token || process.env.GARAGE_ADMIN_TOKEN || null,
    metricsToken: admin.metrics_token || process.env.GARAGE_METRICS_TOKEN || null,
    rpcPublicAddr: cfg.rpc_public_addr || '127.0.0.1:3901',
    replicationFactor: Number(cfg.replication_factor || (cfg.replication_mode === 'none' ? 1 : 1)),
  };
}

function parseBind(addr) {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(addr);
  if (!m) throw new Error(`bad bind address: ${addr}`);
  let host = m[1];
  if (host === '::' || host === '') host = '::';
  return { host, port: Number(m[2]) };
}

// ---------------------------------------------------------------------------------------------
// State (metadata_dir/svc-test-standin.json) and objects (data_dir/<bucket>/<sha256(key)>)
class Store {
  constructor(cfg) {
    this.cfg = cfg;
    fs.mkdirSync(cfg.metadataDir, { recursive: true });
    fs.mkdirSync(cfg.dataDir, { recursive: true });
    this.file = path.join(cfg.metadataDir, 'svc-test-standin.json');
    if (fs.existsSync(this.file)) {
      this.s = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } else {
      this.s = {
        format: 1,
        nodeId: this.nodeId(),
        layout: { version: 0, roles: [], staged: [] },
        keys: {},
        buckets: {},
      };
      this.save();
    }
  }
  nodeId() {
    // Garage keeps its node key in metadata_dir/node_key(.pub); the id is the public key in hex.
    const pub = path.join(this.cfg.metadataDir, 'node_key.pub');
    if (fs.existsSync(pub)) return fs.readFileSync(pub).toString('hex');
    const id = crypto.randomBytes(32);
    writeAtomic(pub, id);
    writeAtomic(path.join(this.cfg.metadataDir, 'node_key'), crypto.randomBytes(64));
    return id.toString('hex');
  }
  save() {
    writeAtomic(this.file, JSON.stringify(this.s, null, 1));
  }
  objectPaths(bucketId, key) {
    const h = crypto.createHash('sha256').update(key).digest('hex');
    return {
      data: path.join(this.cfg.dataDir, bucketId, h),
      meta: path.join(this.cfg.metadataDir, 'objects', bucketId, `${h}.json`),
    };
  }
  listObjects(bucketId) {
    const dir = path.join(this.cfg.metadataDir, 'objects', bucketId);
    if (!fs.existsSync(dir)) return [];
    const out = [];
    for (const f of fs.readdirSync(dir)) {
      if (!f.endsWith('.json')) continue;
      try {
        out.push(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
      } catch {
        /* partially written: ignore */
      }
    }
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }
}

function writeAtomic(file, content) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers
function readBody(req, limit = 5 * 1024 * 1024 * 1024) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res, status, obj) {
  const body = Buffer.from(JSON.stringify(obj, null, 2));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

function sendText(res, status, text) {
  const body = Buffer.from(text);
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------
// Admin API v1
function createAdminHandler(cfg, store) {
  const st = () => store.s;
  const randomHex = (n) => crypto.randomBytes(n).toString('hex');

  const roleOf = (id) => st().layout.roles.find((r) => r.id === id) || null;
  const layoutJson = () => ({
    version: st().layout.version,
    roles: st().layout.roles.map((r) => ({ id: r.id, zone: r.zone, capacity: r.capacity, tags: r.tags })),
    stagedRoleChanges: st().layout.staged,
  });
  const healthy = () => st().layout.roles.some((r) => r.capacity !== null);

  const keyByIdOrThrow = (id) => {
    const k = st().keys[id];
    if (!k) throw new ApiError(404, 'NoSuchAccessKey', `Access key not found: ${id}`);
    return k;
  };
  const bucketInfo = (id) => {
    const b = st().buckets[id];
    const objs = store.listObjects(id);
    return {
      id,
      globalAliases: b.globalAliases.slice(),
      websiteAccess: false,
      websiteConfig: null,
      keys: Object.entries(b.keys).map(([ak, perm]) => ({
        accessKeyId: ak,
        name: st().keys[ak] ? st().keys[ak].name : '',
        permissions: { read: !!perm.read, write: !!perm.write, owner: !!perm.owner },
        bucketLocalAliases: [],
      })),
      objects: objs.length,
      bytes: objs.reduce((s, o) => s + o.size, 0),
      unfinishedUploads: 0,
      unfinishedMultipartUploads: 0,
      unfinishedMultipartUploadParts: 0,
      unfinishedMultipartUploadBytes: 0,
      quotas: { maxSize: null, maxObjects: null },
    };
  };
  const keyInfo = (id, showSecret) => {
    const k = st().keys[id];
    return {
      name: k.name,
      accessKeyId: id,
      secretAccessKey: showSecret ? k.secret : null,
      permissions: { createBucket: !!k.createBucket },
      buckets: Object.entries(st().buckets)
        .filter(([, b]) => b.keys[id])
        .map(([bid, b]) => ({
          id: bid,
          globalAliases: b.globalAliases.slice(),
          localAliases: [],
          permissions: { read: !!b.keys[id].read, write: !!b.keys[id].write, owner: !!b.keys[id].owner },
        })),
    };
  };
  const bucketIdByAlias = (alias) =>
    Object.keys(st().buckets).find((id) => st().buckets[id].globalAliases.includes(alias));
  const bucketOrThrow = (id) => {
    if (!id || !st().buckets[id]) throw new ApiError(404, 'NoSuchBucket', `Bucket not found: ${id}`);
    return st().buckets[id];
  };
  const json = (body) => {
    if (!body.length) throw new ApiError(400, 'InvalidRequest', 'Bad request: missing JSON body');
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (e) {
      throw new ApiError(400, 'InvalidRequest', `Bad request: invalid JSON: ${e.message}`);
    }
  };
  const validBucketName = (n) => /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(n) && !/\.\.|^\d+\.\d+\.\d+\.\d+$/.test(n);

  const routes = {
    'GET /v1/status': () => ({
      node: st().nodeId,
      garageVersion: VERSION,
      garageFeatures: ['svc-test-standin'],
      rustVersion: 'n/a (node ' + process.version + ')',
      dbEngine: 'JSON files (svc-test stand-in)',
      layoutVersion: st().layout.version,
      nodes: [
        {
          id: st().nodeId,
          role: roleOf(st().nodeId)
            ? { zone: roleOf(st().nodeId).zone, capacity: roleOf(st().nodeId).capacity, tags: roleOf(st().nodeId).tags }
            : null,
          addr: cfg.rpcPublicAddr,
          hostname: os.hostname(),
          isUp: true,
          lastSeenSecsAgo: null,
          draining: false,
          dataPartition: diskSpace(cfg.dataDir),
          metadataPartition: diskSpace(cfg.metadataDir),
        },
      ],
    }),
    'GET /v1/health': () => {
      const ok = healthy();
      return {
        status: ok ? 'healthy' : 'unavailable',
        knownNodes: 1,
        connectedNodes: 1,
        storageNodes: ok ? 1 : 0,
        storageNodesOk: ok ? 1 : 0,
        partitions: 256,
        partitionsQuorum: ok ? 256 : 0,
        partitionsAllOk: ok ? 256 : 0,
      };
    },
    'GET /v1/layout': () => layoutJson(),
    'POST /v1/layout': (q, body) => {
      const changes = json(body);
      if (!Array.isArray(changes)) throw new ApiError(400, 'InvalidRequest', 'Bad request: expected an array of role changes');
      for (const c of changes) {
        if (!c || typeof c.id !== 'string') throw new ApiError(400, 'InvalidRequest', 'Bad request: role change without id');
        if (c.id !== st().nodeId) throw new ApiError(400, 'InvalidRequest', `Bad request: unknown node id ${c.id} (single-node stand-in)`);
        let entry;
        if (c.remove === true) entry = { id: c.id, remove: true };
        else {
          if (typeof c.zone !== 'string' || !Array.isArray(c.tags) || !('capacity' in c))
            throw new ApiError(400, 'InvalidRequest', 'Bad request: zone, capacity and tags are required');
          if (c.capacity !== null && !(Number.isInteger(c.capacity) && c.capacity > 0))
            throw new ApiError(400, 'InvalidRequest', 'Bad request: capacity must be a positive integer or null');
          entry = { id: c.id, zone: c.zone, capacity: c.capacity, tags: c.tags.map(String) };
        }
        st().layout.staged = st().layout.staged.filter((s) => s.id !== c.id).concat([entry]);
      }
      store.save();
      return layoutJson();
    },
    'POST /v1/layout/apply': (q, body) => {
      const { version } = json(body);
      const expected = st().layout.version + 1;
      if (version !== expected)
        throw new ApiError(400, 'InvalidRequest', `Bad request: Invalid new layout version: expected ${expected}, got ${version}`);
      if (st().layout.staged.length === 0 && st().layout.version > 0)
        throw new ApiError(400, 'InvalidRequest', 'Bad request: No changes to the layout have been staged');
      for (const c of st().layout.staged) {
        st().layout.roles = st().layout.roles.filter((r) => r.id !== c.id);
        if (!c.remove) st().layout.roles.push({ id: c.id, zone: c.zone, capacity: c.capacity, tags: c.tags });
      }
      if (!st().layout.roles.some((r) => r.capacity !== null))
        throw new ApiError(400, 'InvalidRequest', 'Bad request: The new layout contains no storage node');
      st().layout.staged = [];
      st().layout.version = expected;
      store.save();
      const cap = st().layout.roles.reduce((s, r) => s + (r.capacity || 0), 0);
      return {
        message: [
          '==== COMPUTATION OF A NEW PARTITION ASSIGNATION ====',
          '',
          `Partitions are replicated ${cfg.replicationFactor} times on at least 1 distinct zones.`,
          '',
          `Usable capacity / total cluster capacity: ${cap} B / ${cap} B (100.0 %)`,
        ],
        layout: layoutJson(),
      };
    },
    'POST /v1/layout/revert': (q, body) => {
      const { version } = json(body);
      const expected = st().layout.version + 1;
      if (version !== expected)
        throw new ApiError(400, 'InvalidRequest', `Bad request: Invalid new layout version: expected ${expected}, got ${version}`);
      st().layout.staged = [];
      st().layout.version = expected;
      store.save();
      return { message: ['Staged changes reverted'] };
    },
    'GET /v1/key': (q) => {
      if (q.has('id') || q.has('search')) {
        let id = q.get('id');
        if (!id) {
          const s = q.get('search');
          id = Object.keys(st().keys).find((k) => k.startsWith(s) || st().keys[k].name === s)
            || Object.keys(st().keys).find((k) => st().keys[k].name.startsWith(s));
          if (!id) throw new ApiError(404, 'NoSuchAccessKey', `Access key not found: ${s}`);
        }
        keyByIdOrThrow(id);
        return keyInfo(id, q.get('showSecretKey') === 'true');
      }
      return Object.entries(st().keys).map(([id, k]) => ({ id, name: k.name }));
    },
    'POST /v1/key': (q, body) => {
      if (q.has('id')) {
        const id = q.get('id');
        const k = keyByIdOrThrow(id);
        const b = json(body);
        if (typeof b.name === 'string') k.name = b.name;
        if (b.allow && b.allow.createBucket) k.createBucket = true;
        if (b.deny && b.deny.createBucket) k.createBucket = false;
        store.save();
        return keyInfo(id, false);
      }
      const b = body.length ? json(body) : {};
      const id = 'GK' + randomHex(12);
      st().keys[id] = { name: typeof b.name === 'string' ? b.name : 'Unnamed key', secret: randomHex(32), createBucket: false, created: new Date().toISOString() };
      store.save();
      return keyInfo(id, true);
    },
    'POST /v1/key/import': (q, body) => {
      const b = json(body);
      if (typeof b.accessKeyId !== 'string' || typeof b.secretAccessKey !== 'string')
        throw new ApiError(400, 'InvalidRequest', 'Bad request: accessKeyId and secretAccessKey are required');
      if (!/^GK[0-9a-f]{24}$/.test(b.accessKeyId)) throw new ApiError(400, 'InvalidRequest', 'Bad request: The specified key ID is not a valid Garage key ID (starts with `GK`, followed by 12 hex-encoded bytes)');
      if (!/^[0-9a-f]{64}$/.test(b.secretAccessKey)) throw new ApiError(400, 'InvalidRequest', 'Bad request: The specified secret key is not a valid Garage secret key (composed of 32 hex-encoded bytes)');
      if (st().keys[b.accessKeyId]) throw new ApiError(409, 'KeyAlreadyExists', `Key ${b.accessKeyId} already exists in data store.`);
      st().keys[b.accessKeyId] = { name: typeof b.name === 'string' ? b.name : 'Imported key', secret: b.secretAccessKey, createBucket: false, created: new Date().toISOString() };
      store.save();
      return keyInfo(b.accessKeyId, false);
    },
    'DELETE /v1/key': (q) => {
      const id = q.get('id');
      keyByIdOrThrow(id);
      delete st().keys[id];
      for (const b of Object.values(st().buckets)) delete b.keys[id];
      store.save();
      return null;
    },
    'GET /v1/bucket': (q) => {
      if (q.has('id') || q.has('globalAlias')) {
        const id = q.has('id') ? q.get('id') : bucketIdByAlias(q.get('globalAlias'));
        bucketOrThrow(id);
        return bucketInfo(id);
      }
      return Object.entries(st().buckets).map(([id, b]) => ({ id, globalAliases: b.globalAliases.slice(), localAliases: [] }));
    },
    'POST /v1/bucket': (q, body) => {
      const b = json(body);
      if (b.localAlias) throw new ApiError(400, 'InvalidRequest', 'Bad request: localAlias is not supported by the svc-test stand-in');
      if (b.globalAlias !== undefined) {
        if (typeof b.globalAlias !== 'string' || !validBucketName(b.globalAlias))
          throw new ApiError(400, 'InvalidBucketName', `Invalid bucket name: ${b.globalAlias}`);
        if (bucketIdByAlias(b.globalAlias))
          throw new ApiError(409, 'BucketAlreadyExists', `Bucket ${b.globalAlias} already exists`);
      }
      const id = randomHex(32);
      st().buckets[id] = { globalAliases: b.globalAlias ? [b.globalAlias] : [], keys: {}, created: new Date().toISOString() };
      store.save();
      return bucketInfo(id);
    },
    'DELETE /v1/bucket': (q, body, res) => {
      const id = q.get('id');
      bucketOrThrow(id);
      if (store.listObjects(id).length) throw new ApiError(409, 'BucketNotEmpty', 'Bucket is not empty');
      delete st().buckets[id];
      store.save();
      fs.rmSync(path.join(cfg.dataDir, id), { recursive: true, force: true });
      fs.rmSync(path.join(cfg.metadataDir, 'objects', id), { recursive: true, force: true });
      res.writeHead(204);
      res.end();
      return undefined;
    },
    'POST /v1/bucket/allow': (q, body) => permChange(json(body), true),
    'POST /v1/bucket/deny': (q, body) => permChange(json(body), false),
    // Not Garage: test faults. `{"corruptNextGet": true}` flips one byte of the next whole-object GET.
    'POST /v1/svc-test/faults': (q, body) => {
      store.faults = { ...(store.faults || {}), ...json(body) };
      return store.faults;
    },
    'PUT /v1/bucket/alias/global': (q) => {
      const id = q.get('id');
      const alias = q.get('alias');
      const b = bucketOrThrow(id);
      if (!alias || !validBucketName(alias)) throw new ApiError(400, 'InvalidBucketName', `Invalid bucket name: ${alias}`);
      const other = bucketIdByAlias(alias);
      if (other && other !== id) throw new ApiError(409, 'BucketAlreadyExists', `Alias ${alias} already exists`);
      if (!b.globalAliases.includes(alias)) b.globalAliases.push(alias);
      store.save();
      return bucketInfo(id);
    },
    'DELETE /v1/bucket/alias/global': (q) => {
      const id = q.get('id');
      const b = bucketOrThrow(id);
      b.globalAliases = b.globalAliases.filter((a) => a !== q.get('alias'));
      store.save();
      return bucketInfo(id);
    },
  };

  function permChange(b, allow) {
    const bucket = bucketOrThrow(b.bucketId);
    keyByIdOrThrow(b.accessKeyId);
    const p = b.permissions;
    if (!p || typeof p.read !== 'boolean' || typeof p.write !== 'boolean' || typeof p.owner !== 'boolean')
      throw new ApiError(400, 'InvalidRequest', 'Bad request: permissions {read, write, owner} (booleans) are required');
    const cur = bucket.keys[b.accessKeyId] || { read: false, write: false, owner: false };
    for (const f of ['read', 'write', 'owner']) if (p[f]) cur[f] = allow;
    bucket.keys[b.accessKeyId] = cur;
    store.save();
    return bucketInfo(b.bucketId);
  }

  return async function admin(req, res) {
    const url = new URL(req.url, 'http://admin');
    const route = `${req.method} ${url.pathname}`;
    if (req.method === 'GET' && url.pathname === '/health') {
      if (healthy()) return sendText(res, 200, 'Garage is fully operational');
      return sendText(res, 503, 'Quorum is not available for some/all partitions.');
    }
    if (req.method === 'GET' && url.pathname === '/metrics') {
      if (cfg.metricsToken && req.headers.authorization !== `Bearer ${cfg.metricsToken}`)
        return sendJson(res, 403, errJson('Forbidden', 'Forbidden: Invalid bearer token', url.pathname));
      return sendText(res, 200, `# svc-test garage stand-in\ngarage_build_info{version="${VERSION}"} 1\n`);
    }
    try {
      const handler = routes[route];
      if (!handler) throw new ApiError(400, 'InvalidRequest', `Bad request: Unknown API endpoint: ${route}`);
      if (!cfg.adminToken) throw new ApiError(403, 'Forbidden', 'Forbidden: Admin token isn\'t configured, admin API access is disabled for security.');
      const auth = req.headers.authorization || '';
      const given = Buffer.from(auth.startsWith('Bearer ') ? auth.slice(7) : '');
      const want = Buffer.from(cfg.adminToken);
      if (given.length !== want.length || !crypto.timingSafeEqual(given, want))
        throw new ApiError(403, 'Forbidden', 'Forbidden: Invalid bearer token');
      const body = await readBody(req, 10 * 1024 * 1024);
      const out = await handler(url.searchParams, body, res);
      if (out === undefined) return; // handler answered
      if (out === null) {
        res.writeHead(200, { 'content-length': 0 });
        return res.end();
      }
      return sendJson(res, 200, out);
    } catch (e) {
      if (e instanceof ApiError) return sendJson(res, e.status, errJson(e.code, e.message, url.pathname));
      log('admin error', e);
      return sendJson(res, 500, errJson('InternalError', String(e && e.message), url.pathname));
    }
  };
}

function errJson(code, message, p) {
  return { code, message, region: 'garage', path: p };
}

function diskSpace(dir) {
  try {
    const s = fs.statfsSync(dir);
    return { available: s.bavail * s.bsize, total: s.blocks * s.bsize };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// S3 API with SigV4
const UNSIGNED = 'UNSIGNED-PAYLOAD';
const STREAMING_PREFIX = 'STREAMING-';

function uriEncode(s, encodeSlash) {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (c === '/' && !encodeSlash)) out += c;
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}
function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new S3Error(400, 'InvalidURI', 'Couldn\'t parse the specified URI.');
  }
}
function rawQueryPairs(rawQuery) {
  if (!rawQuery) return [];
  return rawQuery
    .split('&')
    .filter((p) => p.length)
    .map((p) => {
      const i = p.indexOf('=');
      const k = i < 0 ? p : p.slice(0, i);
      const v = i < 0 ? '' : p.slice(i + 1);
      return [safeDecode(k.replace(/\+/g, '%20')), safeDecode(v.replace(/\+/g, '%20'))];
    });
}
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
const sha256hex = (data) => crypto.createHash('sha256').update(data).digest('hex');

class S3Error extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function parseAmzDate(s) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s || '');
  if (!m) return null;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

/** Checks a SigV4 request (header or presigned query); returns {accessKeyId, seedSignature, signingKey, scope, amzDate}. */
function verifySigV4(req, cfg, store, rawPath, rawQuery) {
  const pairs = rawQueryPairs(rawQuery);
  const query = new Map(pairs);
  let accessKeyId, credDate, region, service, signedHeaders, signature, amzDate, payloadHash;
  let presigned = false;
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^AWS4-HMAC-SHA256\s+(.*)$/.exec(auth);
    if (!m) throw new S3Error(400, 'InvalidRequest', 'Unsupported authorization method');
    const fields = {};
    for (const part of m[1].split(',')) {
      const i = part.indexOf('=');
      if (i > 0) fields[part.slice(0, i).trim()] = part.slice(i + 1).trim();
    }
    if (!fields.Credential || !fields.SignedHeaders || !fields.Signature)
      throw new S3Error(400, 'AuthorizationHeaderMalformed', 'Authorization header malformed');
    [accessKeyId, credDate, region, service] = fields.Credential.split('/');
    signedHeaders = fields.SignedHeaders.split(';');
    signature = fields.Signature;
    amzDate = req.headers['x-amz-date'] || '';
    payloadHash = req.headers['x-amz-content-sha256'];
    if (!payloadHash) throw new S3Error(400, 'InvalidRequest', 'Missing X-Amz-Content-Sha256 header');
  } else if (query.get('X-Amz-Algorithm') === 'AWS4-HMAC-SHA256') {
    presigned = true;
    [accessKeyId, credDate, region, service] = (query.get('X-Amz-Credential') || '').split('/');
    signedHeaders = (query.get('X-Amz-SignedHeaders') || '').split(';');
    signature = query.get('X-Amz-Signature') || '';
    amzDate = query.get('X-Amz-Date') || '';
    payloadHash = UNSIGNED;
    const expires = Number(query.get('X-Amz-Expires') || '0');
    const d = parseAmzDate(amzDate);
    if (!d || Date.now() > d.getTime() + expires * 1000) throw new S3Error(403, 'AccessDenied', 'Request has expired');
  } else {
    throw new S3Error(403, 'AccessDenied', 'Forbidden: Garage does not support anonymous access yet');
  }
  const d = parseAmzDate(amzDate);
  if (!d) throw new S3Error(400, 'InvalidRequest', 'Invalid or missing X-Amz-Date');
  if (!presigned && Math.abs(Date.now() - d.getTime()) > 15 * 60 * 1000)
    throw new S3Error(403, 'RequestTimeTooSkewed', 'Date is too far away from current time');
  if (credDate !== amzDate.slice(0, 8)) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'Credential date does not match X-Amz-Date');
  if (service !== 's3') throw new S3Error(400, 'AuthorizationHeaderMalformed', `Service ${service} is not s3`);
  if (region !== cfg.region)
    throw new S3Error(400, 'AuthorizationHeaderMalformed', `Invalid region: ${region}, expected ${cfg.region}`);
  if (!signedHeaders.includes('host')) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'Header `Host` should be signed');
  const key = store.s.keys[accessKeyId];
  if (!key) throw new S3Error(403, 'InvalidAccessKeyId', `No such key: ${accessKeyId}`);

  const canonicalUri = rawPath
    .split('/')
    .map((seg) => uriEncode(safeDecode(seg), true))
    .join('/');
  const canonicalQuery = pairs
    .filter(([k]) => !(presigned && k === 'X-Amz-Signature'))
    .map(([k, v]) => [uriEncode(k, true), uriEncode(v, true)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .map((h) => {
      const v = req.headers[h];
      if (v === undefined) throw new S3Error(400, 'AuthorizationHeaderMalformed', `Signed header ${h} is missing`);
      const val = Array.isArray(v) ? v.join(',') : String(v);
      return `${h}:${val.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), payloadHash].join('\n');
  const scope = `${credDate}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac('AWS4' + key.secret, credDate), region), service), 'aws4_request');
  const expected = hmac(signingKey, stringToSign).toString('hex');
  const a = Buffer.from(expected);
  const b = Buffer.from(String(signature));
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b))
    throw new S3Error(403, 'SignatureDoesNotMatch', 'Forbidden: Invalid signature');
  return { accessKeyId, payloadHash, signingKey, scope, amzDate, seedSignature: signature };
}

/** Decodes an aws-chunked body; checks chunk signatures for STREAMING-AWS4-HMAC-SHA256-PAYLOAD. */
function decodeAwsChunked(buf, auth) {
  const signed = auth.payloadHash.startsWith('STREAMING-AWS4-HMAC-SHA256-PAYLOAD');
  const out = [];
  let pos = 0;
  let prev = auth.seedSignature;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) throw new S3Error(400, 'IncompleteBody', 'Malformed aws-chunked body');
    const header = buf.subarray(pos, eol).toString('latin1');
    const [sizeHex, ...ext] = header.split(';');
    const size = parseInt(sizeHex, 16);
    if (Number.isNaN(size)) throw new S3Error(400, 'IncompleteBody', 'Malformed aws-chunked body');
    const data = buf.subarray(eol + 2, eol + 2 + size);
    if (signed) {
      const sigExt = ext.find((e) => e.startsWith('chunk-signature='));
      const sig = sigExt ? sigExt.slice('chunk-signature='.length) : '';
      const sts = ['AWS4-HMAC-SHA256-PAYLOAD', auth.amzDate, auth.scope, prev, sha256hex(''), sha256hex(data)].join('\n');
      const want = hmac(auth.signingKey, sts).toString('hex');
      if (want !== sig) throw new S3Error(403, 'SignatureDoesNotMatch', 'Forbidden: Invalid chunk signature');
      prev = sig;
    }
    out.push(data);
    pos = eol + 2 + size;
    if (buf.subarray(pos, pos + 2).toString('latin1') === '\r\n') pos += 2;
    if (size === 0) break; // trailers (checksums) after the last chunk are ignored
  }
  return Buffer.concat(out);
}

function xmlEscape(s) {
  return String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
}
function sendXml(res, status, xml, head) {
  const body = Buffer.from('<?xml version="1.0" encoding="UTF-8"?>' + xml);
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': body.length });
  res.end(head ? undefined : body);
}

function createS3Handler(cfg, store) {
  const bucketIdFor = (name) =>
    Object.keys(store.s.buckets).find((id) => store.s.buckets[id].globalAliases.includes(name));

  function allowed(accessKeyId, bucketId, perm) {
    const p = store.s.buckets[bucketId].keys[accessKeyId];
    return !!(p && p[perm]);
  }

  // Multipart upload (CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload,
  // ListMultipartUploads): parts live in data_dir/.multipart/<bucket>/<uploadId>/ until completed, so
  // nothing is visible under the key before the complete call, as in S3.
  const mpDir = (bucketId, id) => path.join(cfg.dataDir, '.multipart', bucketId, id);
  // S3 additional checksums (cfg.checksums): the base64 SHA-256 the client sent, checked against the body.
  function checkedSha256(req, body) {
    const claimed = req.headers['x-amz-checksum-sha256'];
    if (!cfg.checksums || !claimed) return undefined;
    const got = (req.bodySha256 || crypto.createHash('sha256').update(body).digest()).toString('base64');
    if (got !== claimed) throw new S3Error(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
    return got;
  }
  function partDigest(dir, n) {
    const f = path.join(dir, `part-${n}.sha256`);
    if (!fs.existsSync(f)) throw new S3Error(400, 'InvalidRequest', `The upload was created using a sha256 checksum. The complete request must include the checksum for each part. It was missing for part ${n} in the request.`);
    return fs.readFileSync(f);
  }
  function maybeCorrupt(body) {
    if (!(store.faults && store.faults.corruptNextWrite) || body.length === 0) return body;
    store.faults.corruptNextWrite = false;
    const b = Buffer.from(body);
    b[b.length >> 1] ^= 0xff;
    return b;
  }
  const md5 = (b) => crypto.createHash('md5').update(b).digest();
  function listUploads(res, bucketId, bucketName) {
    const dir = path.join(cfg.dataDir, '.multipart', bucketId);
    const ids = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    const items = ids
      .map((id) => {
        try {
          const u = JSON.parse(fs.readFileSync(path.join(dir, id, 'upload.json'), 'utf8'));
          return `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${id}</UploadId><Initiated>${u.initiated}</Initiated></Upload>`;
        } catch {
          return '';
        }
      })
      .join('');
    return sendXml(res, 200, `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${xmlEscape(bucketName)}</Bucket><IsTruncated>false</IsTruncated>${items}</ListMultipartUploadsResult>`);
  }
  async function multipart(req, res, url, bucketId, bucketName, objectKey, body, paths) {
    if (req.method === 'POST' && url.searchParams.has('uploads')) {
      const id = crypto.randomBytes(16).toString('hex');
      const meta = { key: objectKey, contentType: req.headers['content-type'] || 'binary/octet-stream', initiated: new Date().toISOString() };
      if (cfg.checksums && String(req.headers['x-amz-checksum-algorithm'] || '').toUpperCase() === 'SHA256') meta.checksum = 'SHA256';
      writeAtomic(path.join(mpDir(bucketId, id), 'upload.json'), JSON.stringify(meta));
      sendXml(res, 200, `<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${xmlEscape(bucketName)}</Bucket><Key>${xmlEscape(objectKey)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
      return true;
    }
    const uploadId = url.searchParams.get('uploadId');
    if (uploadId === null) return false;
    const dir = /^[0-9a-f]{32}$/.test(uploadId) ? mpDir(bucketId, uploadId) : '';
    if (!dir || !fs.existsSync(path.join(dir, 'upload.json'))) throw new S3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist.');
    if (req.method === 'PUT') {
      const n = Number(url.searchParams.get('partNumber'));
      if (!Number.isInteger(n) || n < 1 || n > 10000) throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000');
      if (store.faults && store.faults.refuseParts) throw new S3Error(400, 'InvalidRequest', 'svc-test fault: part refused');
      const sum = checkedSha256(req, body);
      const stored = maybeCorrupt(body);
      const etag = md5(stored).toString('hex');
      writeAtomic(path.join(dir, `part-${n}`), stored);
      // The part's digest as stored, for the composite checksum at completion.
      if (sum) writeAtomic(path.join(dir, `part-${n}.sha256`), stored === body ? Buffer.from(sum, 'base64') : crypto.createHash('sha256').update(stored).digest());
      res.writeHead(200, { etag: `"${etag}"`, 'content-length': 0, ...(sum ? { 'x-amz-checksum-sha256': sum } : {}) });
      res.end();
      return true;
    }
    if (req.method === 'DELETE') {
      fs.rmSync(dir, { recursive: true, force: true });
      res.writeHead(204);
      res.end();
      return true;
    }
    if (req.method !== 'POST') throw new S3Error(405, 'MethodNotAllowed', 'Method not allowed');
    const xml = body.toString('utf8').replace(/&quot;/g, '"');
    const parts = [...xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map((m) => ({
      n: Number((/<PartNumber>(\d+)<\/PartNumber>/.exec(m[1]) || [])[1]),
      etag: ((/<ETag>"?([^<"]*)"?<\/ETag>/.exec(m[1]) || [])[1] || '').toLowerCase(),
    }));
    if (parts.length === 0) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed');
    const digests = [];
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i > 0 && p.n <= parts[i - 1].n) throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
      const file = path.join(dir, `part-${p.n}`);
      if (!fs.existsSync(file)) throw new S3Error(400, 'InvalidPart', `Part ${p.n} was not uploaded`);
      const d = md5(fs.readFileSync(file));
      if (d.toString('hex') !== p.etag) throw new S3Error(400, 'InvalidPart', `Part ${p.n}: ETag does not match`);
      digests.push(d);
    }
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'upload.json'), 'utf8'));
    const tmp = `${paths.data}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    fs.mkdirSync(path.dirname(paths.data), { recursive: true });
    let size = 0;
    const fd = fs.openSync(tmp, 'w');
    try {
      for (const p of parts) {
        const b = fs.readFileSync(path.join(dir, `part-${p.n}`));
        fs.writeSync(fd, b);
        size += b.length;
      }
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, paths.data);
    const etag = `${md5(Buffer.concat(digests)).toString('hex')}-${parts.length}`;
    // COMPOSITE, from the parts as stored (what the store holds, not what the client claimed).
    const checksumSha256 = meta.checksum === 'SHA256'
      ? `${crypto.createHash('sha256').update(Buffer.concat(parts.map((p) => partDigest(dir, p.n)))).digest('base64')}-${parts.length}`
      : undefined;
    writeAtomic(paths.meta, JSON.stringify({ key: objectKey, size, etag, contentType: meta.contentType, lastModified: new Date().toISOString(), userMeta: {}, checksumSha256 }));
    fs.rmSync(dir, { recursive: true, force: true });
    const sumXml = checksumSha256 ? `<ChecksumSHA256>${checksumSha256}</ChecksumSHA256>` : '';
    sendXml(res, 200, `<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${xmlEscape(bucketName)}</Bucket><Key>${xmlEscape(objectKey)}</Key><ETag>"${etag}"</ETag>${sumXml}</CompleteMultipartUploadResult>`);
    return true;
  }

  return async function s3(req, res) {
    const [rawPath, rawQuery = ''] = req.url.split(/\?(.*)/s);
    const url = new URL(req.url, 'http://s3');
    const head = req.method === 'HEAD';
    if (req.method === 'GET' && url.pathname === '/health') return sendText(res, 200, 'Garage is fully operational');
    try {
      // Virtual-host style when Host is <bucket>.<root_domain>, else path style.
      let bucketName = null;
      let objectKey = '';
      const host = String(req.headers.host || '').replace(/:\d+$/, '');
      const rootDomain = cfg.rootDomain ? cfg.rootDomain.replace(/^\./, '') : null;
      const decodedPath = safeDecode(rawPath);
      if (rootDomain && host.endsWith('.' + rootDomain)) {
        bucketName = host.slice(0, -(rootDomain.length + 1));
        objectKey = decodedPath.slice(1);
      } else {
        const p = decodedPath.slice(1);
        const i = p.indexOf('/');
        bucketName = i < 0 ? p : p.slice(0, i);
        objectKey = i < 0 ? '' : p.slice(i + 1);
      }
      const auth = verifySigV4(req, cfg, store, rawPath, rawQuery);
      let body = await readBody(req);
      if (auth.payloadHash.startsWith(STREAMING_PREFIX)) body = decodeAwsChunked(body, auth);
      // The body's SHA-256, computed once: the signed payload hash and an x-amz-checksum-sha256 are both it.
      const digest = auth.payloadHash.startsWith(STREAMING_PREFIX) || auth.payloadHash === UNSIGNED ? undefined : crypto.createHash('sha256').update(body).digest();
      req.bodySha256 = digest;
      if (digest && digest.toString('hex') !== auth.payloadHash)
        throw new S3Error(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');

      if (!bucketName) {
        if (req.method !== 'GET') throw new S3Error(405, 'MethodNotAllowed', 'Method not allowed');
        const mine = Object.entries(store.s.buckets).filter(([, b]) => b.keys[auth.accessKeyId]);
        const items = mine
          .flatMap(([, b]) => b.globalAliases.map((a) => `<Bucket><Name>${xmlEscape(a)}</Name><CreationDate>${b.created}</CreationDate></Bucket>`))
          .join('');
        return sendXml(res, 200, `<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>${auth.accessKeyId}</ID><DisplayName>${auth.accessKeyId}</DisplayName></Owner><Buckets>${items}</Buckets></ListAllMyBucketsResult>`);
      }
      const bucketId = bucketIdFor(bucketName);
      if (!bucketId) throw new S3Error(404, 'NoSuchBucket', `Bucket not found: ${bucketName}`);
      const need = req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
      if (!allowed(auth.accessKeyId, bucketId, need))
        throw new S3Error(403, 'AccessDenied', `Forbidden: Operation is not allowed for this key.`);

      if (!objectKey) {
        if (req.method === 'HEAD') {
          res.writeHead(200, { 'x-amz-bucket-region': cfg.region });
          return res.end();
        }
        if (req.method === 'GET' && url.searchParams.has('location'))
          return sendXml(res, 200, `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${xmlEscape(cfg.region)}</LocationConstraint>`);
        if (req.method === 'GET' && url.searchParams.has('uploads')) return listUploads(res, bucketId, bucketName);
        if (req.method === 'GET') return listObjectsV2(res, store, bucketId, bucketName, url.searchParams);
        throw new S3Error(501, 'NotImplemented', `Not implemented in the svc-test stand-in: ${req.method} bucket`);
      }

      const paths = store.objectPaths(bucketId, objectKey);
      const mp = await multipart(req, res, url, bucketId, bucketName, objectKey, body, paths);
      if (mp) return;
      if (req.method === 'PUT') {
        if (url.searchParams.has('uploadId') || url.searchParams.has('partNumber') || req.headers['x-amz-copy-source'])
          throw new S3Error(501, 'NotImplemented', 'Multipart upload and copy are not implemented in the svc-test stand-in');
        const etag = crypto.createHash('md5').update(body).digest('hex');
        const userMeta = {};
        for (const [h, v] of Object.entries(req.headers)) if (h.startsWith('x-amz-meta-')) userMeta[h] = String(v);
        const sent = checkedSha256(req, body);
        const stored = maybeCorrupt(body);
        writeAtomic(paths.data, stored);
        writeAtomic(
          paths.meta,
          JSON.stringify({
            key: objectKey,
            size: body.length,
            etag,
            contentType: req.headers['content-type'] || 'binary/octet-stream',
            lastModified: new Date().toISOString(),
            userMeta,
            checksumSha256: sent ? (stored === body ? sent : crypto.createHash('sha256').update(stored).digest('base64')) : undefined,
          }),
        );
        res.writeHead(200, { etag: `"${etag}"`, 'content-length': 0, ...(sent ? { 'x-amz-checksum-sha256': sent } : {}) });
        return res.end();
      }
      if (req.method === 'DELETE') {
        fs.rmSync(paths.meta, { force: true });
        fs.rmSync(paths.data, { force: true });
        res.writeHead(204);
        return res.end();
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        if (!fs.existsSync(paths.meta)) throw new S3Error(404, 'NoSuchKey', 'Key not found');
        const meta = JSON.parse(fs.readFileSync(paths.meta, 'utf8'));
        const headers = {
          'content-type': meta.contentType,
          etag: `"${meta.etag}"`,
          'last-modified': new Date(meta.lastModified).toUTCString(),
          'accept-ranges': 'bytes',
          ...meta.userMeta,
        };
        if (meta.checksumSha256 && String(req.headers['x-amz-checksum-mode'] || '').toUpperCase() === 'ENABLED') {
          headers['x-amz-checksum-sha256'] = meta.checksumSha256;
          headers['x-amz-checksum-type'] = meta.checksumSha256.includes('-') ? 'COMPOSITE' : 'FULL_OBJECT';
        }
        let start = 0;
        let end = meta.size - 1;
        let status = 200;
        const range = req.headers.range && /^bytes=(\d*)-(\d*)$/.exec(req.headers.range);
        if (range && meta.size > 0) {
          if (range[1] === '') start = Math.max(0, meta.size - Number(range[2]));
          else {
            start = Number(range[1]);
            if (range[2] !== '') end = Math.min(end, Number(range[2]));
          }
          if (start > end) throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
          status = 206;
          headers['content-range'] = `bytes ${start}-${end}/${meta.size}`;
        }
        headers['content-length'] = meta.size === 0 ? 0 : end - start + 1;
        res.writeHead(status, headers);
        if (head || meta.size === 0) return res.end();
        if (store.faults && store.faults.corruptNextGet && status === 200) {
          store.faults.corruptNextGet = false;
          const bytes = fs.readFileSync(paths.data);
          bytes[bytes.length >> 1] ^= 0xff;
          return res.end(bytes);
        }
        return fs.createReadStream(paths.data, { start, end }).pipe(res);
      }
      throw new S3Error(405, 'MethodNotAllowed', 'Method not allowed');
    } catch (e) {
      if (e instanceof S3Error) {
        if (head) {
          res.writeHead(e.status);
          return res.end();
        }
        return sendXml(
          res,
          e.status,
          `<Error><Code>${e.code}</Code><Message>${xmlEscape(e.message)}</Message><Resource>${xmlEscape(url.pathname)}</Resource><Region>${xmlEscape(cfg.region)}</Region></Error>`,
        );
      }
      log('s3 error', e);
      return sendXml(res, 500, `<Error><Code>InternalError</Code><Message>${xmlEscape(String(e && e.message))}</Message></Error>`);
    }
  };
}

function listObjectsV2(res, store, bucketId, bucketName, q) {
  const prefix = q.get('prefix') || '';
  const delimiter = q.get('delimiter') || '';
  const maxKeys = Math.min(1000, Math.max(0, Number(q.get('max-keys') || 1000)));
  const after = q.get('continuation-token')
    ? Buffer.from(q.get('continuation-token'), 'base64').toString('utf8')
    : q.get('start-after') || '';
  const contents = [];
  const prefixes = new Set();
  let truncated = false;
  let last = '';
  for (const o of store.listObjects(bucketId)) {
    if (!o.key.startsWith(prefix) || o.key <= after) continue;
    let cp = null;
    if (delimiter) {
      const i = o.key.indexOf(delimiter, prefix.length);
      if (i >= 0) cp = o.key.slice(0, i + delimiter.length);
    }
    if (cp && prefixes.has(cp)) continue;
    if (contents.length + prefixes.size >= maxKeys) {
      truncated = true;
      break;
    }
    if (cp) prefixes.add(cp);
    else contents.push(o);
    last = cp ? cp : o.key;
  }
  const xml =
    `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${xmlEscape(bucketName)}</Name>` +
    `<Prefix>${xmlEscape(prefix)}</Prefix>${delimiter ? `<Delimiter>${xmlEscape(delimiter)}</Delimiter>` : ''}` +
    `<MaxKeys>${maxKeys}</MaxKeys><KeyCount>${contents.length + prefixes.size}</KeyCount><IsTruncated>${truncated}</IsTruncated>` +
    (q.get('continuation-token') ? `<ContinuationToken>${xmlEscape(q.get('continuation-token'))}</ContinuationToken>` : '') +
    (truncated ? `<NextContinuationToken>${Buffer.from(last).toString('base64')}</NextContinuationToken>` : '') +
    contents
      .map(
        (o) =>
          `<Contents><Key>${xmlEscape(o.key)}</Key><LastModified>${o.lastModified}</LastModified><ETag>"${o.etag}"</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
      )
      .join('') +
    [...prefixes].map((p) => `<CommonPrefixes><Prefix>${xmlEscape(p)}</Prefix></CommonPrefixes>`).join('') +
    `</ListBucketResult>`;
  return sendXml(res, 200, xml);
}

// ---------------------------------------------------------------------------------------------
function log(...args) {
  console.error(new Date().toISOString(), 'garage-standin', ...args);
}

function listen(handler, bind, name) {
  const { host, port } = parseBind(bind);
  const server = http.createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((e) => {
      log(`${name} unhandled`, e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen({ host, port, ipv6Only: false }, () => log(`${name} listening on ${bind}`));
  return server;
}

function main() {
  const { configPath, rest } = parseArgs(process.argv.slice(2));
  const cmd = rest.join(' ');
  const cfg = loadConfig(configPath);
  if (cmd === 'server') {
    const store = new Store(cfg);
    log(`${VERSION} node ${store.s.nodeId} (config ${configPath}, data ${cfg.dataDir}, meta ${cfg.metadataDir})`);
    const servers = [listen(createS3Handler(cfg, store), cfg.s3Bind, 'S3 API'), listen(createAdminHandler(cfg, store), cfg.adminBind, 'admin API')];
    const stop = () => {
      log('shutting down');
      for (const s of servers) s.close();
      setTimeout(() => process.exit(0), 2000).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return;
  }
  if (cmd === 'node id' || cmd === 'node id -q' || cmd === 'status') {
    const store = new Store(cfg);
    if (cmd === 'status') {
      console.log(`==== HEALTHY NODES ====\nID\tHostname\tAddress\n${store.s.nodeId.slice(0, 16)}\t${os.hostname()}\t${cfg.rpcPublicAddr}`);
    } else console.log(`${store.s.nodeId}@${cfg.rpcPublicAddr}`);
    return;
  }
  console.error(`garage (svc-test stand-in ${VERSION}): supported commands: server, status, node id [-q]`);
  process.exit(2);
}

if (require.main === module) main();
module.exports = { parseToml, uriEncode };
