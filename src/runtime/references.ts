// The engine's own grammars for what svc hands it by name: image references (distribution/reference)
// and container names or ids. A value outside them never becomes part of an engine request path: the
// engine answers a path like `/images/../web/json` with a redirect, and nothing of a request may ever
// turn into a host name the daemon resolves. Every writer validates with the same functions (src/desired/fields.ts).
import { TerminalError } from '../errors.js';

const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|-+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domain = `${host}(?::[0-9]+)?`;
const name = `(?:${domain}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
/** The whole grammar as one anchored pattern (also published in the manifest JSON Schema). */
export const IMAGE_REF_PATTERN = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);

/** The engine's limit on a repository name (NameTotalLengthMax); whole references stay under 512. */
export const IMAGE_NAME_MAX = 255;
export const IMAGE_REF_MAX = 512;

/**
 * True when `ref` is an image reference the engine accepts as written: `[domain[:port]/]path[:tag][@digest]`,
 * path components lowercase. Rejects `-x`, `../x`, `UPPER:v1`, white space, unicode and NUL.
 */
export function isImageRef(ref: string): boolean {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > IMAGE_REF_MAX) return false;
  const m = IMAGE_REF_PATTERN.exec(ref);
  return m !== null && m[1]!.length <= IMAGE_NAME_MAX;
}

/** The engine's container name grammar (also matches ids and id prefixes); at most 255 characters. */
const CONTAINER_REF = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;

/** True for a container name or id the engine can look up (a single leading `/`, as inspect prints names, is allowed). */
export function isContainerRef(nameOrId: string): boolean {
  return typeof nameOrId === 'string' && CONTAINER_REF.test(nameOrId.startsWith('/') ? nameOrId.slice(1) : nameOrId);
}

/** A name or reference outside the engine's grammar: no retry can fix it, so it ends the work that needs it. */
export class InvalidReferenceError extends TerminalError {
  constructor(what: 'image reference' | 'container name', value: string) {
    super(`invalid ${what} ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value)}: it does not match the engine's grammar`);
    this.name = 'InvalidReferenceError';
  }
}

/** Returns `ref` when it is a valid image reference; throws InvalidReferenceError otherwise. */
export function checkImageRef(ref: string): string {
  if (!isImageRef(ref)) throw new InvalidReferenceError('image reference', String(ref));
  return ref;
}

/** Returns the name or id without a leading `/`; throws InvalidReferenceError when it is not one. */
export function checkContainerRef(nameOrId: string): string {
  if (!isContainerRef(nameOrId)) throw new InvalidReferenceError('container name', String(nameOrId));
  return nameOrId.startsWith('/') ? nameOrId.slice(1) : nameOrId;
}

/** Docker Hub's canonical registry name; `index.docker.io` and `registry-1.docker.io` are the same one. */
export const DOCKER_HUB = 'docker.io';
const HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/**
 * The registry an image reference pulls from, as the engine decides (distribution/reference): the first
 * path component when it looks like a host (has a `.` or a `:`, or is `localhost`), else Docker Hub.
 * `ghcr.io/acme/web:1` -> `ghcr.io`, `127.0.0.1:5000/web` -> `127.0.0.1:5000`, `postgres:16` -> `docker.io`.
 */
export function registryOf(ref: string): string {
  const slash = ref.indexOf('/');
  if (slash < 0) return DOCKER_HUB;
  const first = ref.slice(0, slash);
  if (!(first.includes('.') || first.includes(':') || first === 'localhost')) return DOCKER_HUB;
  return canonicalRegistry(first);
}

/** Lowercase, with Docker Hub's aliases folded into `docker.io`. */
export function canonicalRegistry(server: string): string {
  const s = server.toLowerCase();
  return HUB_ALIASES.has(s) ? DOCKER_HUB : s;
}
