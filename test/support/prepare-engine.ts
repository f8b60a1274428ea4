// Run once by scripts/test.sh before its two streams of test files start side by side: a Docker engine that
// answers (dockerd started when none does) and the tests' Caddy 2.11 fetched into its cache, so the two
// vitest processes' global setups find both and neither races the other for them. Prints the pid of the
// dockerd it started (nothing when one already answered): the script stops that one at its end.
import { ensureEngine } from './global-setup.js';
import { unstableCaddyBin } from './caddy-unstable.js';

unstableCaddyBin();
const pid = await ensureEngine();
if (pid) console.log(pid);
