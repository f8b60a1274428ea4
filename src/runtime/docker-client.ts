// The dockerode client svc talks to the engine with, minus one behaviour that could end the daemon.
// docker-modem follows HTTP redirects itself (lib/http.js). The engine redirects only when it cleans a
// request path, e.g. `GET /images/../web/json` -> `Location: //web/json`; following that sends a second
// request to host `web` (a DNS lookup of a request's value, in the daemon's own process) on a ClientRequest
// nobody listens to for 'error', so its ENOTFOUND was an uncaught exception. With `maxRedirects: 0` the
// redirect is never followed: the 3xx answer itself becomes the call's error.
import Docker from 'dockerode';
import Modem from 'docker-modem';

type BuildRequest = (options: Record<string, unknown>, context: unknown, data: unknown, callback: unknown) => void;

/** A dockerode client whose modem never follows a redirect (per instance, nothing global is patched). */
export function createDockerClient(options: Docker.DockerOptions | undefined): Docker {
  const modem = new Modem(options as Modem.ConstructorOptions);
  const m = modem as unknown as { buildRequest: BuildRequest };
  const build = m.buildRequest.bind(modem);
  m.buildRequest = (opts, context, data, callback) => build({ ...opts, maxRedirects: 0 }, context, data, callback);
  return new Docker({ ...options, modem } as Docker.DockerOptions);
}
