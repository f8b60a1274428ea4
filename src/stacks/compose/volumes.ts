// A service's `volumes` in the short (`SOURCE:TARGET[:MODE]`) and long syntaxes. A named volume must be
// declared at the top level; an anonymous one (`/data` alone) is state too, so it becomes a named volume of
// the stack (`<service>-anon-<n>`, said in a warning) instead of vanishing on the next deploy. A bind mount
// is allowed only from inside the stack's directory: an absolute source, `~` or a `..` that climbs out (the
// Docker socket included) is refused.
import { posix } from 'node:path';
import type { StackVolumeMount } from '../model.js';
import { insideStack } from './paths.js';
import { isObject, type Report } from './report.js';

export interface ServiceVolumes {
  mounts: StackVolumeMount[];
  tmpfs: string[];
  /** Named volumes this service made from anonymous ones. */
  anonymous: string[];
}

const MODES = new Set(['ro', 'rw', 'z', 'Z', 'nocopy', 'cached', 'delegated', 'consistent', 'shared', 'slave', 'private', 'rshared', 'rslave', 'rprivate']);

interface Parsed {
  type: string;
  source?: string;
  target: string;
  readOnly: boolean;
}

function parseShort(text: string): Parsed | undefined {
  const parts = text.split(':');
  if (parts.length === 1) return { type: 'volume', target: parts[0], readOnly: false };
  let modes: string[] = [];
  if (parts.length === 3) modes = parts.pop()!.split(',');
  else if (parts.length !== 2) return undefined;
  if (modes.some((m) => !MODES.has(m))) return undefined;
  const [source, target] = parts;
  const bind = source.startsWith('.') || source.startsWith('/') || source.startsWith('~');
  return { type: bind ? 'bind' : 'volume', source, target, readOnly: modes.includes('ro') };
}

export function serviceVolumes(entries: unknown[], service: string, declared: Set<string>, composeDir: string, report: Report): ServiceVolumes {
  const out: ServiceVolumes = { mounts: [], tmpfs: [], anonymous: [] };
  entries.forEach((entry, i) => {
    const key = `volumes[${i}]`;
    let v: Parsed | undefined;
    if (typeof entry === 'string') v = parseShort(entry);
    else if (isObject(entry) && typeof entry.target === 'string')
      v = { type: String(entry.type), source: entry.source === undefined ? undefined : String(entry.source), target: entry.target, readOnly: entry.read_only === true || entry.read_only === 'true' };
    if (!v) return report.refuse(service, key, `${JSON.stringify(entry)} is not a volume mount (SOURCE:TARGET[:MODE])`);
    if (!posix.isAbsolute(v.target)) return report.refuse(service, key, `the target "${v.target}" must be an absolute path in the container`);
    const target = posix.normalize(v.target);
    if (isObject(entry) && isObject(entry.volume) && entry.volume.subpath !== undefined) report.refuse(service, `${key}.volume.subpath`, 'svc mounts whole volumes only');
    switch (v.type) {
      case 'volume': {
        if (v.source === undefined || v.source === '') {
          const name = `${service}-anon-${i}`;
          out.anonymous.push(name);
          out.mounts.push({ kind: 'named', volume: name, target, readOnly: v.readOnly });
          return report.warn(service, key, `the anonymous volume at ${target} becomes the named volume ${name} (kept across deploys, in backups)`);
        }
        if (!declared.has(v.source)) return report.refuse(service, `${key}.source`, `the volume "${v.source}" is not declared in the top-level volumes`);
        out.mounts.push({ kind: 'named', volume: v.source, target, readOnly: v.readOnly });
        return;
      }
      case 'bind': {
        const source = v.source ?? '';
        const inside = insideStack(composeDir, source);
        if (!inside) {
          const socket = /docker\.sock$/.test(source) ? ' (the Docker socket gives the host)' : '';
          return report.refuse(service, `${key}.source`, `the bind mount "${source}" is outside the stack's directory${socket}: a stack never gets the host; use a named volume or a path inside the stack's directory`);
        }
        out.mounts.push({ kind: 'bind', source: inside, target, readOnly: v.readOnly });
        return;
      }
      case 'tmpfs':
        out.tmpfs.push(target);
        return;
      default:
        return report.refuse(service, `${key}.type`, `volumes of type ${v.type} are not supported by svc (volume, bind inside the stack, tmpfs)`);
    }
  });
  return out;
}
