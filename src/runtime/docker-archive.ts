// A directory of a container as a tar stream (the engine's `GET /containers/{id}/archive`, what `docker cp`
// reads), over one dockerode client: the local engine's, or another Swarm node's through its agent, so a
// data directory on a worker's disk is read where it is (docs/decisions/0042-service-data-on-other-nodes.md).
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import { checkContainerRef as ref } from './references.js';

/** Pure: a path inside a container that the archive endpoint may be asked for (absolute, no `..`, no oddities). */
export function checkContainerPath(path: string): string {
  if (path.length > 1024 || !/^\/[A-Za-z0-9._/@+-]*$/.test(path) || path.split('/').some((p) => p === '..' || p === '.')) {
    throw new Error(`"${path.slice(0, 80)}" is not a plain absolute path inside a container`);
  }
  return path;
}

/** The engine's tar stream of `path` in the container (entries named `<basename>/...`, owners and modes kept). */
export async function readContainerDir(docker: Docker, nameOrId: string, path: string): Promise<NodeJS.ReadableStream> {
  const container = docker.getContainer(ref(nameOrId));
  return (await call(`archive ${nameOrId}:${path}`, () => container.getArchive({ path: checkContainerPath(path) }) as Promise<NodeJS.ReadableStream>))!;
}
