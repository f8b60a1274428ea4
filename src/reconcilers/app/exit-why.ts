// How an app event says why a container stopped on its own. An OOM kill the engine confirms (OOMKilled)
// is said as such; a Swarm task on a worker can only be suspected (exit 137 under a memory limit: Swarm's
// task status has no OOMKilled flag and svc cannot ask that node's engine), and the event says so.
export function exitWhy(c: { oomKilled?: boolean; oomLikely?: boolean; exitCode?: number }): string {
  if (c.oomKilled) return 'was killed for memory (OOMKilled)';
  if (c.oomLikely) return 'was killed (exit 137) under its memory limit: most likely for memory (OOMKilled could not be confirmed: the engine of its node could not be asked)';
  return `exited with code ${c.exitCode ?? 'unknown'}`;
}
