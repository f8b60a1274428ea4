// One health check of a container that is to receive traffic (a deploy's staging container, or the kept
// container a flip-back returns to): inspect it, probe health_check_path on its svc-network address, judge.
import type { ContainerInfo } from '../../runtime/runtime.js';
import type { AppRow } from '../../store/schema/index.js';
import type { AppReconcilerDeps } from './deps.js';
import { judgeProbe, type ProbeVerdict } from './plan.js';
import { parseServiceSpec, probesHttp } from '../../stacks/service-spec.js';

export interface HealthCheck {
  info: ContainerInfo | undefined;
  httpStatus: number | undefined;
  verdict: ProbeVerdict;
}

/** Checks `container` once; `startedMs` is when its health check began (the 30 s timeout runs from it). */
export async function checkHealth(
  deps: AppReconcilerDeps,
  app: Pick<AppRow, 'internalPort' | 'healthCheckPath'> & Partial<Pick<AppRow, 'stackService'>>,
  container: string,
  startedMs: number,
): Promise<HealthCheck> {
  const info = await deps.runtime.inspect(container, deps.settings.network);
  // A stack service without a route, or with a Compose healthcheck, is judged by the engine's check alone.
  const stack = app.stackService ? parseServiceSpec(deps.sealer.open(app.stackService)) : undefined;
  const http = !stack || probesHttp(stack.service);
  const httpStatus = !http
    ? undefined
    : info?.running && info.address ? await deps.probe(`http://${info.address}:${app.internalPort}${app.healthCheckPath}`, 1_000) : undefined;
  const verdict = judgeProbe({
    running: info?.running ?? false,
    exitCode: info?.exitCode,
    httpStatus,
    dockerHealth: info?.health ?? 'none',
    http,
    elapsedMs: deps.now() - startedMs,
    timeoutMs: deps.settings.healthTimeoutMs,
  });
  return { info, httpStatus, verdict };
}
