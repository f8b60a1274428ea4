// The archive's `.env`: the effective SVC_* configuration as a file that `parseEnv` (config.ts) reads back
// to the same values, so a restored host starts with exactly the settings (and encryption key) it had.

/** `KEY=value` lines, sorted; values with spaces, quotes, `#` or newlines are quoted. */
export function envFileText(vars: Record<string, string>): string {
  const lines = Object.keys(vars)
    .sort()
    .map((k) => `${k}=${quote(vars[k])}`);
  return lines.join('\n') + '\n';
}

function quote(v: string): string {
  if (/^[A-Za-z0-9_./:@+=,-]*$/.test(v)) return v;
  if (!v.includes("'") && !v.includes('\n')) return `'${v}'`;
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
