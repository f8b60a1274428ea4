// One health check of a container that is to receive traffic (a deploy's staging container, or the kept
// container a flip-back returns to): inspect it, probe health_check_path on its svc-network address, judge.
import type { ContainerInfo } from '../../runtime/runtime.js';
import type { AppRow } from '../../store/schema/index.js';
import type { AppReconcilerDeps } from './deps.js';
import { judgeProbe, type ProbeVerdict } from './plan.js';

export interface HealthCheck {
  info: ContainerInfo | undefined;
  httpStatus: number | undefined;
  verdict: ProbeVerdict;
}

/** Checks `container` once; `startedMs` is when its health check began (the 30 s timeout runs from it). */
export async function checkHealth(
  deps: AppReconcilerDeps,
  app: Pick<AppRow, 'internalPort' | 'healthCheckPath'>,
  container: string,
  startedMs: number,
): Promise<HealthCheck> {
  const info = await deps.runtime.inspect(container, deps.settings.network);
  const httpStatus =
    info?.running && info.address ? await deps.probe(`http://${info.address}:${app.internalPort}${app.healthCheckPath}`, 1_000) : undefined;
  const verdict = judgeProbe({
    running: info?.running ?? false,
    exitCode: info?.exitCode,
    httpStatus,
    dockerHealth: info?.health ?? 'none',
    elapsedMs: deps.now() - startedMs,
    timeoutMs: deps.settings.healthTimeoutMs,
  });
  return { info, httpStatus, verdict };
}
