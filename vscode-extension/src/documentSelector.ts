// The documents Tokenline attaches to, from the setting `tokenline.languages`: language ids and glob
// patterns of file paths. Pure: it returns plain document filters for vscode-languageclient.

export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

const SCHEMES = ['file', 'untitled'];

/** An entry is a glob pattern when it has a path or wildcard character, else a language id. */
export function isPattern(entry: string): boolean {
  return /[*?/\\{[]/.test(entry) || entry.includes('.');
}

export function documentSelector(entries: readonly string[]): DocumentFilter[] {
  const out: DocumentFilter[] = [];
  const seen = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) {
      continue;
    }
    for (const scheme of SCHEMES) {
      let f: DocumentFilter;
      if (entry === '*') {
        f = { scheme };
      } else if (isPattern(entry)) {
        if (scheme === 'untitled') {
          continue; // an untitled document has no path to match
        }
        f = { scheme, pattern: entry };
      } else {
        f = { scheme, language: entry };
      }
      const key = JSON.stringify(f);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(f);
      }
    }
  }
  return out;
}
