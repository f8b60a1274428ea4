// How a repository is built (SPEC.md 2.1 project type rules): a root Dockerfile wins; otherwise the
// app's project_type picks the provider, or `auto` detects it from sentinel files in the root. Pure:
// it sees only the names of the root entries; the Dockerfile text comes from dockerfiles.ts.
import type { Config } from '../config.js';
import { generateDockerfile } from './dockerfiles.js';

export type ProjectType = 'auto' | 'static' | 'node' | 'go' | 'java';
export type Provider = Exclude<ProjectType, 'auto'>;

export type BuildPlan =
  | { kind: 'dockerfile'; reason: string }
  | { kind: 'provider'; provider: Provider; reason: string; port: number; dockerfile: string }
  | { kind: 'error'; message: string };

export const PROVIDER_PORTS: Record<Provider, number> = { static: 80, node: 3000, go: 8080, java: 8080 };

const SENTINELS: Record<Provider, string[]> = {
  node: ['package.json'],
  go: ['go.mod'],
  java: ['pom.xml', 'build.gradle', 'build.gradle.kts'],
  static: ['index.html'],
};
/** Detection order for `auto`: a Node or Go project may also ship an index.html. */
const ORDER: Provider[] = ['node', 'go', 'java', 'static'];
const NEEDS: Record<Provider, string> = {
  static: 'index.html',
  node: 'package.json',
  go: 'go.mod',
  java: 'pom.xml or build.gradle',
};

/** The plan for a checkout whose root holds `files` (names only). */
export function planBuild(files: readonly string[], projectType: ProjectType, images: Config['buildImages']): BuildPlan {
  const has = new Set(files);
  if (has.has('Dockerfile')) return { kind: 'dockerfile', reason: 'Dockerfile found in the repository root; used as it is' };
  let provider: Provider;
  let reason: string;
  if (projectType === 'auto') {
    const found = ORDER.find((p) => SENTINELS[p].some((f) => has.has(f)));
    if (!found) {
      return { kind: 'error', message: 'could not detect the project type: no Dockerfile, package.json, go.mod, pom.xml, build.gradle or index.html in the repository root' };
    }
    provider = found;
    reason = `detected ${found} from ${SENTINELS[found].find((f) => has.has(f))} (project_type auto)`;
  } else {
    provider = projectType;
    if (!SENTINELS[provider].some((f) => has.has(f))) return { kind: 'error', message: `project type ${provider} needs ${NEEDS[provider]} in the repository root` };
    reason = `project_type ${provider}`;
  }
  const dockerfile = generateDockerfile(provider, { files: has, images });
  return { kind: 'provider', provider, reason, port: PROVIDER_PORTS[provider], dockerfile };
}
