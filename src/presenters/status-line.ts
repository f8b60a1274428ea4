// Pure: the one sentence every view (dashboard, app page, `svc apps`) puts beside an app's status, so a
// failed deploy of an app that still serves never reads like an app with nothing running:
// "serving v2 · last deploy failed: health check / failed". Built from the API fields, so the CLI (over
// REST) and the server-rendered pages say exactly the same thing.

export interface StatusFacts {
  status: 'active' | 'inactive' | 'error';
  serving: boolean;
  live_image: string | null;
  status_reason: string | null;
  route_error: string | null;
  /** Absent in older callers: no certificate problem known. */
  certificate_error?: string | null;
}

/** The version part of an image reference: its tag (`v2`), a short digest, or the reference itself. */
export function imageVersion(ref: string): string {
  const at = ref.indexOf('@');
  if (at >= 0) return ref.slice(at + 1).replace(/^sha256:/, '').slice(0, 12);
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(colon + 1) : ref;
}

/** One line, no newline in it (a reason spanning lines is joined). */
export function statusLine(f: StatusFacts): string {
  const parts = [f.serving ? (f.live_image ? `serving ${imageVersion(f.live_image)}` : 'serving') : 'not serving'];
  if (f.status === 'error') parts.push(`last deploy failed: ${oneLine(f.status_reason) || 'no reason recorded'}`);
  if (f.route_error) parts.push(`not routed: ${oneLine(f.route_error)}`);
  if (f.certificate_error) parts.push(`no certificate: ${oneLine(f.certificate_error)}`);
  return parts.join(' · ');
}

const oneLine = (s: string | null) => (s ?? '').replace(/\s+/g, ' ').trim();
