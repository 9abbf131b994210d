// The language ids a file will likely open with, from its name alone: before VS Code hands an opened
// file's document to the extension host, only its tab (and so its path) is known, and Tokenline's
// `tokenline.languages` names languages. Read from the languages extensions contribute (their file
// extensions and file names) and the user's `files.associations` (`*.ext` and plain file names; an
// association wins). Pure: no `vscode` import.

/** A `contributes.languages` entry of an extension's package.json. */
export interface LanguageContribution {
  id: string;
  extensions?: string[];
  filenames?: string[];
}

function basename(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** The association of `files.associations` that names this file (`*.ext` or a plain name), if any. */
function associated(name: string, associations: Readonly<Record<string, string>>): string | undefined {
  const lower = name.toLowerCase();
  let found: string | undefined;
  let longest = -1;
  for (const [pattern, id] of Object.entries(associations)) {
    if (typeof id !== 'string') {
      continue;
    }
    const p = pattern.toLowerCase();
    const suffix = p.startsWith('*.') && !/[*?[{/\\]/.test(p.slice(1)) ? p.slice(1) : undefined;
    const hit = suffix ? lower.endsWith(suffix) : p === lower;
    // The most specific pattern wins (`*.prompt.md` over `*.md`; a plain name over both).
    const weight = suffix ? suffix.length : Number.MAX_SAFE_INTEGER;
    if (hit && weight > longest) {
      found = id;
      longest = weight;
    }
  }
  return found;
}

/** The language ids a file at `path` may open with (none when nothing names it). */
export function languagesOf(
  path: string,
  contributions: readonly LanguageContribution[],
  associations: Readonly<Record<string, string>> = {},
): string[] {
  const name = basename(path);
  const association = associated(name, associations);
  if (association) {
    return [association];
  }
  const lower = name.toLowerCase();
  const ids = new Set<string>();
  for (const c of contributions) {
    const byName = (c.filenames ?? []).some((f) => f.toLowerCase() === lower);
    const byExtension = (c.extensions ?? []).some((e) => e && lower.endsWith(e.toLowerCase()));
    if (byName || byExtension) {
      ids.add(c.id);
    }
  }
  return [...ids];
}

/** The languages every extension contributes, from their package.json `contributes.languages`. */
export function contributedLanguages(packageJsons: readonly unknown[]): LanguageContribution[] {
  const out: LanguageContribution[] = [];
  for (const pkg of packageJsons) {
    const languages = (pkg as { contributes?: { languages?: unknown } } | undefined)?.contributes?.languages;
    if (!Array.isArray(languages)) {
      continue;
    }
    for (const l of languages as Array<Partial<LanguageContribution>>) {
      if (l && typeof l.id === 'string') {
        out.push({
          id: l.id,
          extensions: Array.isArray(l.extensions) ? l.extensions.filter((e) => typeof e === 'string') : [],
          filenames: Array.isArray(l.filenames) ? l.filenames.filter((f) => typeof f === 'string') : [],
        });
      }
    }
  }
  return out;
}
