// The Caddy the tests run by default: Debian's `caddy` package from suite `unstable` (Caddy 2.11, what the
// `caddy:2` image users run carries), fetched by name with apt's own tools into a cache directory of its
// own (its own sources list naming the archive the host already uses, its own lists and archives) and
// unpacked with `dpkg -x`: the host's packages, sources and apt state are never changed. Its only
// dependency beyond the base system is libc6 >= 2.34 (bookworm has 2.36). Fetched once, reused after.
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE = process.env.SVC_TEST_CACHE ?? join(homedir(), '.cache', 'svc-test');
/** Where the unpacked package lives: `<cache>/caddy-unstable/root/usr/bin/caddy`. */
export const UNSTABLE_CADDY_DIR = join(CACHE, 'caddy-unstable');
export const UNSTABLE_CADDY_BIN = join(UNSTABLE_CADDY_DIR, 'root', 'usr', 'bin', 'caddy');
const DEFAULT_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

/** Pure: the Debian archive the host's apt sources name (not its security archive), and its keyring. */
export function debianArchive(sources: { name: string; text: string }[]): { uri: string; signedBy: string } | undefined {
  for (const { name, text } of sources) {
    if (name.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (k: string) => new RegExp(`^${k}:\\s*(.+)$`, 'mi').exec(stanza)?.[1].trim();
        const uri = field('URIs')?.split(/\s+/)[0];
        if (field('Types')?.split(/\s+/).includes('deb') && uri && isDebianMain(uri, field('Components') ?? '')) return { uri, signedBy: field('Signed-By') ?? DEFAULT_KEYRING };
      }
    } else {
      for (const line of text.split('\n')) {
        const m = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+\S+\s+(.*)$/.exec(line.trim());
        if (m && isDebianMain(m[2], m[3])) return { uri: m[2], signedBy: /signed-by=(\S+)/.exec(m[1] ?? '')?.[1] ?? DEFAULT_KEYRING };
      }
    }
  }
  return undefined;
}

const isDebianMain = (uri: string, components: string) => /\/debian\/?$/.test(uri) && components.split(/\s+/).includes('main');

function hostSources(): { name: string; text: string }[] {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) files.push(...readdirSync(dir).filter((f) => f.endsWith('.list') || f.endsWith('.sources')).map((f) => join(dir, f)));
  return files.filter((f) => existsSync(f)).map((f) => ({ name: f, text: readFileSync(f, 'utf8') }));
}

/**
 * The unpacked Caddy of `unstable` (fetched now when the cache lacks it; seconds: a 11 MB package list and
 * a 12 MB package). Synchronous so module-level constants and benches can call it; concurrent callers
 * (several vitest runs) each unpack into a temp dir and the first rename wins.
 */
export function unstableCaddyBin(): string {
  if (existsSync(UNSTABLE_CADDY_BIN)) return UNSTABLE_CADDY_BIN;
  const archive = debianArchive(hostSources());
  if (!archive) throw new Error('no Debian archive with component main in /etc/apt/sources.list*: cannot fetch caddy from unstable');
  mkdirSync(UNSTABLE_CADDY_DIR, { recursive: true });
  const work = mkdtempSync(join(UNSTABLE_CADDY_DIR, 'fetch-'));
  try {
    const list = join(work, 'unstable.sources');
    writeFileSync(list, `Types: deb\nURIs: ${archive.uri}\nSuites: unstable\nComponents: main\nSigned-By: ${archive.signedBy}\n`);
    for (const d of ['lists/partial', 'archives/partial', 'cache']) mkdirSync(join(work, d), { recursive: true });
    const apt = [
      '-q',
      '-o', `Dir::Etc::SourceList=${list}`,
      '-o', 'Dir::Etc::SourceParts=/nonexistent',
      '-o', `Dir::State::Lists=${join(work, 'lists')}`,
      '-o', `Dir::Cache=${join(work, 'cache')}`,
      '-o', `Dir::Cache::Archives=${join(work, 'archives')}`,
      '-o', 'APT::Sandbox::User=root',
    ];
    const opts: ExecFileSyncOptions = { cwd: join(work, 'archives'), stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 };
    execFileSync('apt-get', [...apt, 'update'], opts);
    execFileSync('apt-get', [...apt, 'download', 'caddy'], opts);
    const deb = readdirSync(join(work, 'archives')).find((f) => /^caddy_.*\.deb$/.test(f));
    if (!deb) throw new Error('apt-get download caddy left no package');
    execFileSync('dpkg', ['-x', join(work, 'archives', deb), join(work, 'root')], opts);
    try {
      renameSync(join(work, 'root'), join(UNSTABLE_CADDY_DIR, 'root'));
    } catch (err) {
      if (!existsSync(UNSTABLE_CADDY_BIN)) throw err; // another run's rename won
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return UNSTABLE_CADDY_BIN;
}

/** `caddy version`'s first word (`2.11.4`, `2.6.2`). */
export function caddyVersionOf(bin: string): string {
  return execFileSync(bin, ['version'], { encoding: 'utf8', timeout: 30_000 }).trim().split(/\s+/)[0].replace(/^v/, '');
}
