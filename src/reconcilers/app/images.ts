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
