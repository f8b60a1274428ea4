// Image reference rules for deploys (API.md "Deploys", pull policy as Kubernetes' default).

/** True when the reference names the `latest` tag, explicitly or by having no tag and no digest. */
export function isLatest(ref: string): boolean {
  if (ref.includes('@')) return false;
  const lastSegment = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  return colon === -1 || lastSegment.slice(colon + 1) === 'latest';
}

/** `:latest` is always pulled; any other reference only when the engine does not have it. */
export const mustPull = (ref: string, present: boolean) => isLatest(ref) || !present;

/** The image reference without its tag or digest (`ghcr.io/o/app:1.2` -> `ghcr.io/o/app`). */
export function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const base = at === -1 ? ref : ref.slice(0, at);
  const slash = base.lastIndexOf('/');
  const colon = base.lastIndexOf(':');
  return colon > slash ? base.slice(0, colon) : base;
}
