// The shapes of the metrics answers (docs/api.md "Metrics"; metrics/query.ts builds them) as schemas for the
// OpenAPI document. Every figure is null when the round had none (a stopped container, no cgroup limit).
import { z } from 'zod';

const figure = z.number().nullable();
/** An app's or a service's figures (valuesJson). */
const workloadValues = {
  cpu_cores: figure,
  memory_bytes: figure,
  memory_limit_bytes: figure,
  net_rx_bytes_per_second: figure,
  net_tx_bytes_per_second: figure,
  block_read_bytes_per_second: figure,
  block_write_bytes_per_second: figure,
  containers: figure.describe('how many containers the figures add up'),
};
/** The host's figures (valuesJson with host). */
const hostValues = { cpu_cores: figure, memory_bytes: figure, memory_limit_bytes: figure, disk_used_bytes: figure, disk_total_bytes: figure };

const container = z.object({ name: z.string(), ...workloadValues });
const point = z.object({ time: z.string(), ...workloadValues });

const series = {
  range: z.enum(['1h', '24h', '7d']),
  step_seconds: z.number().int().describe('the width of a point'),
};

export const appMetricsJsonSchema = z
  .object({
    app: z.string(),
    ...series,
    points: z.array(point),
    containers: z.array(container).describe("the last round's figures per container"),
    replicas: z.array(z.object({ replica: z.number().int(), points: z.array(point) })).optional().describe('?by=replica: the points of each replica slot'),
  })
  .meta({ id: 'AppMetrics' });

export const serviceMetricsJsonSchema = z
  .object({ service: z.string(), ...series, points: z.array(point), containers: z.array(container) })
  .meta({ id: 'ServiceMetrics' });

export const hostMetricsJsonSchema = z
  .object({ ...series, points: z.array(z.object({ time: z.string(), ...hostValues })) })
  .meta({ id: 'HostMetrics' });

export const metricsTopJsonSchema = z
  .object({
    time: z.string().nullable().describe('when the last round was taken; null before the first'),
    host: z.object(hostValues).nullable(),
    subjects: z.array(z.object({ kind: z.enum(['app', 'service']), name: z.string(), ...workloadValues, containers: z.array(container) })),
  })
  .meta({ id: 'MetricsTop' });
