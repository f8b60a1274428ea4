// Pure: the banner a redirect asked for ("Deploy queued", "Service created") once its outcome is known.
// The page computes it from the deploy or service as it is now, and the banner is a `data-live` part,
// so the page's refresh (after the deploy stream ends, or every few seconds) turns it into the result.
import type { DeployRow } from '../store/schema/index.js';
import type { ServiceView } from '../store/service-view.js';
import { imageVersion } from '../presenters/status-line.js';

export interface Notice {
  text: string;
  tone: 'ok' | 'error';
}

/** The banner after "Deploy" or "Rollback": queued while it runs, then what became of deploy `d`. */
export function deployNotice(code: string, d: Pick<DeployRow, 'id' | 'status' | 'error' | 'imageRef'> | undefined): Notice | undefined {
  if (code !== 'deploy_queued' && code !== 'rollback_queued') return undefined;
  const what = code === 'rollback_queued' ? 'Rollback' : 'Deploy';
  if (!d) return { text: `${what} queued. Its progress is shown below.`, tone: 'ok' };
  const version = d.imageRef ? ` ${imageVersion(d.imageRef)}` : '';
  switch (d.status) {
    case 'success':
      return { text: `${what} #${d.id} succeeded: serving${version}.`, tone: 'ok' };
    case 'failed':
      return { text: `${what} #${d.id} failed: ${d.error ?? 'no reason recorded'}`, tone: 'error' };
    case 'auto_rollback':
      return { text: `${what} #${d.id} was rolled back automatically: ${d.error ?? 'it failed after the switch'}`, tone: 'error' };
    case 'cancelled':
      return { text: `${what} #${d.id} was cancelled${d.error ? `: ${d.error}` : '.'}`, tone: 'error' };
    default:
      return { text: `${what} #${d.id} ${d.status === 'running' ? 'is running' : 'is queued'}. Its progress is shown below.`, tone: 'ok' };
  }
}

/** The banner after "Create service": provisioning, then running or why not. */
export function serviceNotice(code: string, s: Pick<ServiceView, 'status' | 'error'>): Notice | undefined {
  if (code !== 'service_created') return undefined;
  if (s.status === 'active') return { text: 'Service created and running.', tone: 'ok' };
  if (s.status === 'error') return { text: `Service created, but it could not be provisioned: ${s.error ?? 'no reason recorded'}`, tone: 'error' };
  return { text: 'Service created. It is being provisioned.', tone: 'ok' };
}
