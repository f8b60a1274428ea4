// The `x-svc` extension of a service: how svc routes, deploys, links and schedules it (issue 32 "Routing").
//   x-svc: { domain, port, strategy, health_path, links: [{service, alias}], jobs: [{name, schedule, command, timeout_seconds}] }
import { z } from 'zod';
import type { StackServiceSvc } from '../model.js';
import { shellWords } from './shell-words.js';

// Interpolated values arrive as strings: "8080" is a port as much as 8080.
const int = (min: number, max: number) => z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).pipe(z.number().int().min(min).max(max));

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

export const xSvcSchema = z
  .object({
    domain: z.string().transform((d) => d.toLowerCase()).pipe(z.string().regex(HOST_NAME, 'must be a host name such as app.example.com')).optional(),
    port: int(1, 65535).optional(),
    strategy: z.enum(['blue_green', 'stop_first']).optional(),
    health_path: z.string().regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with /').optional(),
    links: z
      .array(
        z
          .object({
            service: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be the name of one of svc\'s services'),
            alias: z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'must start with an uppercase letter and contain only A-Z, 0-9 and _').optional(),
          })
          .strict(),
      )
      .default([]),
    jobs: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must start with a lowercase letter and contain only a-z, 0-9 and -'),
            schedule: z.string().min(1),
            command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
            timeout_seconds: int(1, 86_400).optional(),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

export type XSvc = z.infer<typeof xSvcSchema>;

/** The keys of `x-svc`, for a refusal of any other. */
export const X_SVC_KEYS = Object.keys(xSvcSchema.shape);

export function svcSettings(x: XSvc): StackServiceSvc {
  const out: StackServiceSvc = {
    links: x.links.map((l) => (l.alias === undefined ? { service: l.service } : { service: l.service, alias: l.alias })),
    jobs: x.jobs.map((j) => ({ name: j.name, schedule: j.schedule, command: typeof j.command === 'string' ? shellWords(j.command) : j.command, ...(j.timeout_seconds === undefined ? {} : { timeoutSeconds: j.timeout_seconds }) })),
  };
  if (x.strategy) out.strategy = x.strategy;
  if (x.health_path) out.healthPath = x.health_path;
  return out;
}
