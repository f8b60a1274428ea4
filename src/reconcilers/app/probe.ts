// The HTTP health probe of a staging container, sent straight to its address on the svc network (not
// through the proxy: traffic must not reach it before it answered). No keep-alive, short timeout.
import { request } from 'node:http';

export type Probe = (url: string, timeoutMs: number) => Promise<number | undefined>;

/** Status code of `GET url`, or undefined when nothing answered in time. */
export const httpProbe: Probe = (url, timeoutMs) =>
  new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs, headers: { 'user-agent': 'svc-health-check' } }, (res) => {
      res.on('error', () => {}); // a reset after the status line changes nothing: the status is the answer
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
