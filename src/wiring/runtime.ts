// Which Runtime the daemon drives (SVC_RUNTIME) and how health probes reach what it runs: the one engine's
// containers are on a bridge the host reaches directly; Swarm tasks are on an overlay only containers
// reach, so probes go through the helper on the overlay (src/runtime/swarm-probe.ts). The only place that
// knows which runtime there is.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createDockerRuntime } from '../runtime/docker.js';
import type { Runtime } from '../runtime/runtime.js';
import { createSwarmRuntime } from '../runtime/swarm.js';
import { createHelperProbe } from '../runtime/swarm-probe.js';
import { httpProbe } from '../reconcilers/app/probe.js';
import { tcpOpen } from '../reconcilers/service/readiness.js';

export interface RuntimeWiring {
  runtime: Runtime;
  /** Status of `GET url` as the proxy would reach it. */
  probe: (url: string, timeoutMs: number) => Promise<number | undefined>;
  tcpOpen: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
}

export function wireRuntime(config: Config, log: Logger): RuntimeWiring {
  if (config.runtime.kind === 'docker') {
    return { runtime: createDockerRuntime({ dockerHost: config.dockerHost, log, instance: config.instance }), probe: httpProbe, tcpOpen };
  }
  const runtime = createSwarmRuntime({ dockerHost: config.dockerHost, log, instance: config.instance, registry: config.runtime.registry });
  const probe = createHelperProbe({ runtime, instance: config.instance, network: config.network, image: config.runtime.probeImage });
  return { runtime, probe, tcpOpen: probe.tcpOpen };
}
