// `--json` of the listing commands: the API's answer as it came, indented, one document on stdout, so
// `svc apps --json | jq` sees exactly what GET /api/apps answers (docs/api.md "CLI").
export function printJson(value: unknown, write: (s: string) => void = (s) => void process.stdout.write(s)): void {
  write(JSON.stringify(value, null, 2) + '\n');
}
