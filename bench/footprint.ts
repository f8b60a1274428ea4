// Memory of a set of processes, counted four ways (bench:idle; docs/decisions/0023-idle-footprint.md):
// - rss: the sum of each one's resident set (what ps and top show): a page two of them map counts twice, and
//   the pages of a binary (node's, Caddy's) count in full though any other process running it shares them;
// - pss: the sum of proportional set sizes: a page mapped by n processes counts 1/n in each, those n
//   including processes outside the set (other node processes on this machine, the bench itself);
// - uss: the sum of private pages, what ending them would give back for sure;
// - unique: the distinct physical pages the set maps, each once, whoever else maps it too: what the set
//   occupies on a host where nothing else runs. Needs root (/proc/PID/pagemap hides frame numbers otherwise);
//   undefined without it.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

export interface Footprint {
  rssKb: number;
  pssKb: number;
  ussKb: number;
  uniqueKb: number | undefined;
}

const PAGE_KB = 4;
const canSeeFrames = process.getuid?.() === 0;

export function footprint(pids: number[]): Footprint {
  let rssKb = 0;
  let pssKb = 0;
  let ussKb = 0;
  for (const pid of pids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    } catch {
      continue; // gone since it was listed
    }
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    rssKb += kb('Rss');
    pssKb += kb('Pss');
    ussKb += kb('Private_Clean') + kb('Private_Dirty');
  }
  return { rssKb, pssKb, ussKb, uniqueKb: canSeeFrames ? distinctFrames(pids) * PAGE_KB : undefined };
}

/** Distinct physical frames mapped by the processes (present pages of every readable mapping). */
function distinctFrames(pids: number[]): number {
  const frames = new Set<number>();
  for (const pid of pids) {
    let maps: string;
    let fd: number;
    try {
      maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
      fd = openSync(`/proc/${pid}/pagemap`, 'r');
    } catch {
      continue;
    }
    try {
      for (const line of maps.split('\n')) {
        const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4})/.exec(line);
        if (!m || m[3].startsWith('---')) continue; // reservations with no access hold no pages
        if (line.endsWith('[vsyscall]')) continue;
        const from = parseInt(m[1], 16) / 4096;
        const pages = parseInt(m[2], 16) / 4096 - from;
        const buf = Buffer.alloc(Math.min(pages, 65536) * 8);
        for (let done = 0; done < pages; ) {
          const n = Math.min(pages - done, 65536);
          const got = readSync(fd, buf, 0, n * 8, (from + done) * 8);
          for (let o = 0; o + 8 <= got; o += 8) {
            const high = buf.readUInt32LE(o + 4);
            if (high & 0x80000000) frames.add((high & 0x7fffff) * 2 ** 32 + buf.readUInt32LE(o)); // present: frame bits 0-54
          }
          done += n;
          if (got < n * 8) break;
        }
      }
    } catch {
      /* gone meanwhile: what was read counts */
    } finally {
      closeSync(fd);
    }
  }
  return frames.size;
}
