// The one place the extension reads its settings. The settings themselves (names, defaults,
// descriptions, scopes) are declared once, in package.json; this module only reads them through a
// `get(key)` view such as `vscode.workspace.getConfiguration('tokenline', resource)`, so it has no
// `vscode` import and is unit-tested on its own.

export const SECTION = 'tokenline';

/** What `vscode.WorkspaceConfiguration` offers; a plain object works in tests. */
export interface ConfigView {
  get<T>(key: string): T | undefined;
}

/** The settings the language server reads (docs/protocol.md, "Settings"). */
export interface ServerSettings {
  model: string;
  contextWindow: number;
  warnAt: number;
  sectionCounts: boolean;
  /** Models each document is also counted with, in this order. */
  compareModels: string[];
  /** The user's context windows by model name or spec. */
  contextWindows: Record<string, number>;
}

export interface Settings extends ServerSettings {
  /** Interpreter that runs `-m tokenline serve`; '' = Python extension's, else python3. */
  python: string;
  /** Explicit server command line; empty = use `python`. */
  serverCommand: string[];
  boundariesEnabled: boolean;
  /** Language ids and glob patterns of the documents Tokenline attaches to. */
  languages: string[];
}

/** Keys (under `tokenline.`) whose change must be sent to the running server. */
export const SERVER_KEYS = ['model', 'contextWindow', 'warnAt', 'sectionCounts', 'compareModels', 'contextWindows'] as const;
/** Keys whose change needs a new server process or a new document selector. */
export const RESTART_KEYS = ['python', 'server.command', 'languages'] as const;

// Fallbacks for a missing or ill-typed value. They equal the package.json defaults, which VS Code
// normally supplies itself; they matter only for hand-edited settings.json values of the wrong type.
const FALLBACK = {
  contextWindow: 8192,
  warnAt: 0.9,
  languages: [
    'markdown',
    'plaintext',
    'prompt',
    '**/*.prompt',
    '**/*.prompty',
    '**/*.prompt.md',
    'jsonl',
    '**/*.jsonl',
    '**/*.prompt.yml',
    '**/*.prompt.yaml',
  ],
};

function str(cfg: ConfigView, key: string): string {
  const v = cfg.get<unknown>(key);
  return typeof v === 'string' ? v.trim() : '';
}

function bool(cfg: ConfigView, key: string, fallback: boolean): boolean {
  const v = cfg.get<unknown>(key);
  return typeof v === 'boolean' ? v : fallback;
}

/** A list of non-empty strings (other entries dropped); [] for anything else. */
function arrayOf(cfg: ConfigView, key: string): string[] {
  const v = cfg.get<unknown>(key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim()) : [];
}

function strings(cfg: ConfigView, key: string): string[] | undefined {
  const v = cfg.get<unknown>(key);
  if (typeof v === 'string') {
    return splitCommandLine(v);
  }
  if (Array.isArray(v)) {
    return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
  }
  return undefined;
}

/** Context window: a positive integer; anything else falls back to the default. */
export function normalizeContextWindow(v: unknown): number {
  const n = typeof v === 'string' ? parseContextWindow(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : FALLBACK.contextWindow;
}

/** Context windows by model: the entries whose window is a positive integer. */
export function normalizeContextWindows(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    for (const [k, n] of Object.entries(v)) {
      if (k.trim() !== '' && typeof n === 'number' && Number.isSafeInteger(n) && n > 0) {
        out[k.trim()] = n;
      }
    }
  }
  return out;
}

/** warnAt: a fraction in [0, 1]; anything else falls back to the default. */
export function normalizeWarnAt(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1 ? v : FALLBACK.warnAt;
}

export function readSettings(cfg: ConfigView): Settings {
  return {
    model: str(cfg, 'model'),
    contextWindow: normalizeContextWindow(cfg.get('contextWindow')),
    warnAt: normalizeWarnAt(cfg.get('warnAt')),
    sectionCounts: bool(cfg, 'sectionCounts', true),
    compareModels: arrayOf(cfg, 'compareModels'),
    contextWindows: normalizeContextWindows(cfg.get('contextWindows')),
    python: str(cfg, 'python'),
    serverCommand: strings(cfg, 'server.command') ?? [],
    boundariesEnabled: bool(cfg, 'boundaries.enabled', true),
    languages: strings(cfg, 'languages') ?? FALLBACK.languages,
  };
}

/**
 * The server settings with every default filled in: what the server uses when neither the user nor
 * the project configuration sets a key (package.json's defaults and the server's agree).
 */
export function serverSettings(s: Settings): ServerSettings {
  return {
    model: s.model,
    contextWindow: s.contextWindow,
    warnAt: s.warnAt,
    sectionCounts: s.sectionCounts,
    compareModels: s.compareModels,
    contextWindows: s.contextWindows,
  };
}

/** What `vscode.WorkspaceConfiguration.inspect(key)` tells about one setting. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** A view that can tell a value the user set from a default; a plain object works in tests. */
export interface InspectView {
  inspect<T>(key: string): Inspected<T> | undefined;
}

/**
 * The server settings the user has set (user, workspace or folder settings), without the
 * package.json defaults: the server fills what is left unset from the project configuration
 * (`[tool.tokenline]` in pyproject.toml, docs/configuration.md), then its own defaults, which are
 * these same defaults. An empty model is unset too. Values are passed as written: the server
 * validates them and says what it ignores.
 */
export function explicitServerSettings(cfg: InspectView): Partial<ServerSettings> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const i = cfg.inspect<unknown>(key);
    const v = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) {
      continue;
    }
    out[key] = typeof v === 'string' ? v.trim() : v;
  }
  return out as Partial<ServerSettings>;
}

/** Parses what a user types as a context window ("128000", "128,000", "131_072"). */
export function parseContextWindow(text: string): number | undefined {
  if (!/^\s*\d[\d,_]*\s*$/.test(text)) {
    return undefined;
  }
  const n = Number(text.replace(/[,_\s]/g, ''));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Splits a command line written as one string ("tokenline serve", "'/my dir/tokenline' serve")
 * into arguments: white space separates, single and double quotes group, no other shell syntax.
 */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let has = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) {
        quote = undefined;
      } else {
        cur += ch;
      }
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has) {
        out.push(cur);
      }
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (has) {
    out.push(cur);
  }
  return out;
}
