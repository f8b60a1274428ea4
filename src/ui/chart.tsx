/** @jsxImportSource hono/jsx */
// Resource charts rendered on the server as inline SVG (issue 22: no charting bundle): one line per series
// over the range's points, a gap where a value is unknown, the cap as a dashed line, the last value and
// the peak in words (a chart alone says nothing to a screen reader). Pure functions of the API's points.
import type { FC } from 'hono/jsx';

export interface ChartPoint {
  time: string;
  [field: string]: number | null | string | undefined;
}

const W = 600;
const H = 120;
const PAD = 4;

/** Pure: the `d` of an SVG path through the known values, broken where a value is null. */
export function linePath(values: (number | null)[], max: number): string {
  if (values.length === 0 || max <= 0) return '';
  const step = values.length > 1 ? (W - 2 * PAD) / (values.length - 1) : 0;
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      pen = false;
      return;
    }
    const x = (PAD + i * step).toFixed(1);
    const y = (H - PAD - (Math.min(v, max) / max) * (H - 2 * PAD)).toFixed(1);
    d += `${pen ? 'L' : 'M'}${x} ${y}`;
    pen = true;
  });
  return d;
}

export const bytes = (n: number | null | undefined): string => {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 || u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
};
export const cores = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : `${(n * 100).toFixed(n < 0.1 ? 1 : 0)} %`);
export const rate = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : `${bytes(n)}/s`);

interface Series {
  field: string;
  label: string;
  cls: string;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export const Chart: FC<{ title: string; points: ChartPoint[]; series: Series[]; format: (n: number | null) => string; limitField?: string }> = (p) => {
  const columns = p.series.map((s) => p.points.map((pt) => num(pt[s.field])));
  const limits = p.limitField ? p.points.map((pt) => num(pt[p.limitField!])) : [];
  const lastLimit = [...limits].reverse().find((v) => v !== null) ?? null;
  const peak = Math.max(0, ...columns.flat().map((v) => v ?? 0));
  const max = Math.max(peak, lastLimit ?? 0) * 1.1 || 1;
  const last = columns.map((c) => [...c].reverse().find((v) => v !== null) ?? null);
  const summary = p.series.map((s, i) => `${s.label} ${p.format(last[i])}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>
        <strong>{p.title}</strong> <span class="muted">now {summary}; peak {p.format(peak)}{lastLimit !== null ? `; limit ${p.format(lastLimit)}` : ''}</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`${p.title}: ${summary}`}>
        <line x1="0" y1={H - PAD} x2={W} y2={H - PAD} class="axis" />
        {lastLimit !== null && <line x1="0" x2={W} y1={(H - PAD - (lastLimit / max) * (H - 2 * PAD)).toFixed(1)} y2={(H - PAD - (lastLimit / max) * (H - 2 * PAD)).toFixed(1)} class="limit" />}
        {p.series.map((s, i) => (
          <path d={linePath(columns[i], max)} class={`line ${s.cls}`} fill="none" />
        ))}
      </svg>
      {p.points.length === 0 && <p class="muted">No figures yet: they appear while a container runs.</p>}
    </figure>
  );
};

const RANGES = ['1h', '24h', '7d'] as const;

/** One replica's points (API.md "Metrics", `?by=replica`). */
export interface ReplicaPoints {
  replica: number;
  points: ChartPoint[];
}

const FIELDS = ['cpu_cores', 'memory_bytes', 'memory_limit_bytes'] as const;
const replicaField = (replica: number, field: string) => `r${replica}_${field}`;

/** Pure: the replicas' CPU and memory as fields `r<N>_<field>` of one point per time, oldest first. */
export function mergeReplicas(replicas: ReplicaPoints[]): ChartPoint[] {
  const byTime = new Map<string, ChartPoint>();
  for (const r of replicas) {
    for (const p of r.points) {
      const row = byTime.get(p.time) ?? { time: p.time };
      for (const f of FIELDS) row[replicaField(r.replica, f)] = p[f];
      byTime.set(p.time, row);
    }
  }
  return [...byTime.values()].sort((a, b) => a.time.localeCompare(b.time));
}

/**
 * The CPU, memory and I/O charts of an app or service, or the host's CPU, memory and disk. `replicas`
 * given (an app asked `?by=replica`): CPU and memory are drawn one line per replica instead of the sum.
 * `perReplica`: offer the choice (apps only).
 */
export const MetricCharts: FC<{ points: ChartPoint[]; range: string; base: string; host?: boolean; perReplica?: boolean; replicas?: ReplicaPoints[] }> = (p) => {
  const by = p.replicas ? '&by=replica' : '';
  const merged = p.replicas && mergeReplicas(p.replicas);
  const series = (field: string, label: string) =>
    p.replicas ? p.replicas.map((r, i) => ({ field: replicaField(r.replica, field), label: `replica ${r.replica}`, cls: `s${(i % 6) + 1}` })) : [{ field, label, cls: 's1' }];
  const cpuPoints = merged ?? p.points;
  return (
  <section id="metrics" data-live aria-labelledby="h-metrics">
    <h2 id="h-metrics">Resources</h2>
    <p class="row">
      {RANGES.map((r) => (r === p.range ? <strong>{r}</strong> : <a href={`${p.base}?range=${r}${by}#metrics`}>{r}</a>))}
      {p.perReplica && (
        <span>
          {' · '}
          {p.replicas ? <a href={`${p.base}?range=${p.range}#metrics`}>All replicas summed</a> : <strong>All replicas summed</strong>}
          {' · '}
          {p.replicas ? <strong>Per replica</strong> : <a href={`${p.base}?range=${p.range}&by=replica#metrics`}>Per replica</a>}
        </span>
      )}
    </p>
    {p.replicas && p.replicas.length === 0 && <p class="muted">No per-replica figures in this range: they are kept while the app runs more than one replica.</p>}
    <div class="charts">
      <Chart title="CPU" points={cpuPoints} series={series('cpu_cores', 'CPU')} format={cores} />
      <Chart title="Memory" points={cpuPoints} series={series('memory_bytes', 'in use')} format={bytes} limitField={p.replicas?.[0] ? replicaField(p.replicas[0].replica, 'memory_limit_bytes') : p.replicas ? undefined : 'memory_limit_bytes'} />
      {p.host ? (
        <Chart title="Disk (data directory)" points={p.points} series={[{ field: 'disk_used_bytes', label: 'used', cls: 's1' }]} format={bytes} limitField="disk_total_bytes" />
      ) : (
        <>
          <Chart title="Network" points={p.points} series={[{ field: 'net_rx_bytes_per_second', label: 'in', cls: 's1' }, { field: 'net_tx_bytes_per_second', label: 'out', cls: 's2' }]} format={rate} />
          <Chart title="Block I/O" points={p.points} series={[{ field: 'block_read_bytes_per_second', label: 'read', cls: 's1' }, { field: 'block_write_bytes_per_second', label: 'write', cls: 's2' }]} format={rate} />
        </>
      )}
    </div>
  </section>
  );
};
