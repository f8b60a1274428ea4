// The rules a whole app record must satisfy, whichever way it is written (REST create, partial update,
// manifest apply): they span fields, so per-field validation at the edge cannot enforce them alone.
import { conflict, invalidIssues, type Issue } from '../errors.js';
import { isContainerRef } from '../runtime/references.js';
import type { AppRow } from '../store/schema/index.js';

/** The writable fields of an app (everything but the immutable name and the observed facts). */
export type AppFields = Pick<
  AppRow,
  | 'appType' | 'buildMode' | 'projectType' | 'source' | 'repoUrl' | 'branch' | 'internalPort'
  | 'imageRef' | 'domain' | 'fallbackPort' | 'accessMode' | 'healthCheckPath' | 'ciWorkflow'
  | 'replicas' | 'memoryMb' | 'cpus' | 'volumes' | 'deployStrategy' | 'drainSeconds' | 'jobs' | 'previews' | 'codeHost'
>;


export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Throws `invalid` (400 `invalid_request`) (issues named by their API field) when the record breaks a rule. */
export function checkAppRules(f: AppFields, reservedPorts: number[] = []): void {
  const issues: Issue[] = [];
  if (f.accessMode === 'domain' && !f.domain) issues.push({ path: 'domain', message: 'required when access_mode is domain' });
  if (f.accessMode === 'port' && !f.fallbackPort) issues.push({ path: 'fallback_port', message: 'required when access_mode is port' });
  if (f.fallbackPort && reservedPorts.includes(f.fallbackPort)) {
    issues.push({ path: 'fallback_port', message: `port ${f.fallbackPort} is used by svc itself` });
  }
  if (f.appType === 'adopted_container' && !(f.source && isContainerRef(f.source))) {
    issues.push({ path: 'source', message: 'required for adopted_container: the name of an existing container' });
  }
  if (f.appType === 'external_service' && !(f.source && isHttpUrl(f.source))) {
    issues.push({ path: 'source', message: 'required for external_service: an http(s) URL of the upstream' });
  }
  if (f.deployStrategy === 'stop_first' && f.replicas > 1) {
    issues.push({ path: 'deploy_strategy', message: 'stop_first runs one container at a time: replicas must be 0 or 1' });
  }
  if (f.appType === 'external_service' && f.volumes !== '[]') issues.push({ path: 'volumes', message: 'an external_service runs no container to mount volumes into' });
  if (f.appType === 'external_service' && f.jobs !== '[]') issues.push({ path: 'jobs', message: 'an external_service has no image to run jobs with' });
  if (issues.length > 0) throw invalidIssues(issues);
}

/** The API field a SQLite UNIQUE violation on `apps` is about, or undefined for any other error. */
export function uniqueFieldOf(err: unknown): string | undefined {
  if (!(err instanceof Error) || (err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
  const m = /UNIQUE constraint failed: apps\.(\w+)/.exec(err.message);
  return m ? m[1] : undefined;
}

/** Runs a write; a UNIQUE violation on `apps` that slipped past the checks (a concurrent writer) is still a 409. */
export function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const field = uniqueFieldOf(err);
    if (field) throw conflict(`${field} is already used by another app`, { field });
    throw err;
  }
}
