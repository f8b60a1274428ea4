// A `command:` or `entrypoint:` string split the way Compose splits it (compose-go uses mattn/go-shellwords:
// whitespace separates words, single quotes are literal, double quotes and backslashes escape, no variable or
// glob expansion). An unquoted `;`, `&`, `|`, `<`, `>` would end go-shellwords' parse and drop the rest, so
// it is an error here: the file means a shell, and should say `sh -c '...'`.

export class ShellWordsError extends Error {}

export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (c === '\\') {
      const n = line[i + 1];
      if (n === undefined) throw new ShellWordsError(`"${line}" ends with a backslash`);
      // In double quotes a backslash escapes only what the shell lets it escape.
      if (quote === '"' && !['"', '\\', '$', '`', '\n'].includes(n)) word += c;
      if (n !== '\n') word += n;
      inWord = true;
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    if (';&|<>'.includes(c)) throw new ShellWordsError(`"${line}" has an unquoted "${c}": Compose does not run a shell; write ["sh", "-c", "..."]`);
    word += c;
    inWord = true;
  }
  if (quote) throw new ShellWordsError(`"${line}" has an unclosed ${quote}`);
  if (inWord) words.push(word);
  return words;
}
