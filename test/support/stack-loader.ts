// A stand-in for the Compose loader (src/stacks/compose/load.ts, written beside this work) in tests of the
// stack command and reconciler: the "file" is JSON of a ComposeStack whose services give only what they
// set (the rest takes the model's defaults), after `${VAR}` / `${VAR:-default}` interpolation from the
// stack's variables. `{"problems": [...]}` loads as a refusal. Builds ComposeStack values directly, as the
// model (src/stacks/model.ts) is the contract both sides share.
import type { ComposeInput, ComposeLoad, ComposeProblem, StackService } from '../../src/stacks/model.js';

export type ServiceDraft = Partial<StackService> & { name: string };

export function service(d: ServiceDraft): StackService {
  return {
    environment: {}, expose: [], volumes: [], tmpfs: [], dependsOn: [], restart: 'no', replicas: 1, limits: {}, labels: {}, init: false,
    networks: ['default'], ...d, svc: { links: [], jobs: [], ...d.svc },
  };
}

/** The JSON "Compose file" of these services (volumes: every named one they mount). */
export function composeText(services: ServiceDraft[]): string {
  const volumes = [...new Set(services.flatMap((s) => (s.volumes ?? []).flatMap((v) => (v.kind === 'named' ? [v.volume] : []))))].sort();
  return JSON.stringify({ services, volumes, networks: ['default'] }, null, 1);
}

export function jsonComposeLoader(input: ComposeInput): ComposeLoad {
  const text = input.text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, key: string, dflt?: string) => input.variables[key] || (dflt ?? ''));
  const parsed = JSON.parse(text) as { services?: ServiceDraft[]; volumes?: string[]; networks?: string[]; problems?: ComposeProblem[] };
  if (parsed.problems) return { ok: false, problems: parsed.problems };
  const services = (parsed.services ?? []).map(service);
  // As the real loader: a service waited on with service_completed_successfully runs once.
  const once = new Set(services.flatMap((s) => s.dependsOn.filter((d) => d.condition === 'service_completed_successfully').map((d) => d.service)));
  for (const s of services) if (once.has(s.name)) s.runsOnce = true;
  return { ok: true, stack: { services, volumes: parsed.volumes ?? [], networks: parsed.networks ?? ['default'] }, warnings: [] };
}
