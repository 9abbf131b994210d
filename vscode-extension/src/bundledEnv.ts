// The server the .vsix carries: bundled/wheels holds the tokenline wheels (the core compiled with
// mypyc for the CPython it was built with, and a pure-Python one), bundled/bundle.json their
// version and id. On first start they are installed into a private virtual environment in the
// extension's global storage, made with the user's Python (>= 3.10): pip picks the compiled wheel
// where its tags match, the pure one elsewhere, and fetches the dependencies from the package
// index. Later starts reuse that environment; a new bundle (another id) gets a new one.
//
// No `vscode` import: the caller passes a process runner, a log and a progress callback, so every
// path (no Python, an old Python, venv or pip failing, reuse) is unit-tested with a fake runner.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shellQuote } from './format';
import type { Cancellation, RunResult, Runner } from './process';

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export interface Bundle {
  version: string;
  /** Hash of the bundled wheels: names the environment they are installed into. */
  id: string;
  wheels: string[];
}

/** An interpreter to try: the Python extension's, or a name looked up on PATH. */
export interface Candidate {
  command: string;
  args?: string[];
  /** For messages: "the Python extension's interpreter", "python3 on PATH". */
  from: string;
}

export interface BasePython {
  /** Absolute path (sys.executable). */
  executable: string;
  version: string;
}

export interface EnvHost {
  run: Runner;
  info(message: string): void;
  /** Process output while installing, as it comes. */
  output(text: string): void;
  /** One-line progress ("Creating a Python 3.11 environment…"). */
  progress(message: string): void;
  token?: Cancellation;
}

export interface EnvPaths {
  /** The extension's global storage folder. */
  storage: string;
  /** The extension's bundled/ folder. */
  bundled: string;
  platform: string;
}

export type Failure =
  | { kind: 'no-bundle'; message: string }
  | { kind: 'no-python'; message: string }
  | { kind: 'venv' | 'install' | 'cancelled'; message: string; command: string };

export type EnvResult = { ok: true; python: string; created: boolean } | { ok: false; failure: Failure };

const VENV_TIMEOUT_MS = 3 * 60_000;
const PIP_TIMEOUT_MS = 15 * 60_000;
const CHECK_TIMEOUT_MS = 60_000;
const PROBE = 'import sys; print("%d.%d.%d" % sys.version_info[:3]); print(sys.executable)';
const VERSION_CHECK = 'import importlib.metadata as m; print(m.version("tokenline"))';

/** bundled/bundle.json, or why it cannot be read (an extension built without `npm run package`). */
export function readBundle(bundledDir: string): Bundle | string {
  const file = path.join(bundledDir, 'bundle.json');
  try {
    const b = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Bundle>;
    if (typeof b.version === 'string' && typeof b.id === 'string' && Array.isArray(b.wheels) && b.wheels.length > 0) {
      return { version: b.version, id: b.id, wheels: b.wheels };
    }
    return `${file} lacks version, id or wheels`;
  } catch (err) {
    return `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Interpreters looked up on PATH, best first, when the Python extension offers none. */
export function pathCandidates(platform: string): Candidate[] {
  if (platform === 'win32') {
    return [
      { command: 'python', from: 'python on PATH' },
      { command: 'py', args: ['-3'], from: 'the py launcher' },
    ];
  }
  const names = ['python3', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10', 'python'];
  return names.map((n) => ({ command: n, from: `${n} on PATH` }));
}

export function envDir(paths: EnvPaths, bundle: Bundle): string {
  return path.join(paths.storage, `env-${bundle.version}-${bundle.id}`);
}

export function envPython(dir: string, platform: string): string {
  return platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

/**
 * The two pip installs: tokenline itself only from the bundled wheels (never from the index, where
 * another package could take the name), then its dependencies (bundled/requirements.txt, read
 * from the wheel) from the package index.
 */
export function installArgs(bundledDir: string, version: string): string[][] {
  return [
    ['-m', 'pip', 'install', '--no-index', '--no-deps', '--find-links', path.join(bundledDir, 'wheels'), `tokenline==${version}`],
    ['-m', 'pip', 'install', '-r', path.join(bundledDir, 'requirements.txt')],
  ];
}

/** For pip run by the extension: no prompts, no progress bars in the log, no upgrade advice. */
export const QUIET_PIP = ['--disable-pip-version-check', '--no-input', '--progress-bar', 'off'];

/** What to run by hand to make the environment the extension looks for (from its storage folder). */
export function manualCommand(base: string, dir: string, paths: EnvPaths, bundle: Bundle): string {
  const name = path.basename(dir);
  const py = path.relative(paths.storage, envPython(dir, paths.platform));
  const cd = paths.platform === 'win32' ? 'cd /d' : 'cd';
  const steps = [
    `${cd} ${shellQuote([paths.storage])}`,
    shellQuote([base, '-m', 'venv', name]),
    ...installArgs(paths.bundled, bundle.version).map((a) => shellQuote([py, ...a])),
  ];
  return steps.join(' && ');
}

/** "3.11.7" >= 3.10? */
export function supported(version: string): boolean {
  const [major, minor] = version.split('.').map((x) => Number(x));
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** The environment of this bundle when it is there and has this tokenline; else undefined. */
export async function readyEnv(paths: EnvPaths, bundle: Bundle, host: EnvHost): Promise<string | undefined> {
  const dir = envDir(paths, bundle);
  const py = envPython(dir, paths.platform);
  if (!fs.existsSync(py)) {
    return undefined;
  }
  const r = await host.run(py, ['-c', VERSION_CHECK], { timeoutMs: CHECK_TIMEOUT_MS });
  if (r.code === 0 && r.stdout.trim() === bundle.version) {
    host.info(`Using the server environment ${dir} (tokenline ${bundle.version}).`);
    return py;
  }
  host.info(`The server environment ${dir} is not usable (${why(r)}); it is made again.`);
  return undefined;
}

/** The first candidate that runs and is Python >= 3.10, or a message naming what each one was. */
export async function findPython(candidates: Candidate[], host: EnvHost): Promise<BasePython | string> {
  const seen: string[] = [];
  const missing: string[] = [];
  const executables = new Set<string>();
  for (const c of candidates) {
    const r = await host.run(c.command, [...(c.args ?? []), '-c', PROBE], { timeoutMs: CHECK_TIMEOUT_MS });
    const [version, executable] = r.stdout.trim().split(/\r?\n/);
    if (r.code !== 0 || !version || !executable) {
      if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
        missing.push(c.command);
      } else {
        seen.push(`${c.from} does not run (${why(r)})`);
      }
    } else if (!supported(version)) {
      // python3 and python are often the same interpreter: name it once.
      if (!executables.has(executable)) {
        seen.push(`${c.from} is Python ${version} (${executable})`);
      }
      executables.add(executable);
    } else {
      host.info(`Python for the server environment: ${executable} (Python ${version}, ${c.from}).`);
      return { executable, version };
    }
  }
  if (missing.length > 0) {
    seen.push(`not found: ${missing.join(', ')}`);
  }
  return seen.join('; ');
}

/** Creates the environment of this bundle with `base`; on failure removes what it made. */
export async function createEnv(paths: EnvPaths, bundle: Bundle, base: BasePython, host: EnvHost): Promise<EnvResult> {
  const dir = envDir(paths, bundle);
  const command = manualCommand(base.executable, dir, paths, bundle);
  // Built under a temporary name and renamed at the end: a half-made environment is never taken
  // for a ready one, and two windows starting at once cannot install into the same folder.
  const tmp = path.join(paths.storage, `tmp-${bundle.id}-${randomBytes(4).toString('hex')}`);
  const tmpPy = envPython(tmp, paths.platform);
  const fail = (kind: 'venv' | 'install' | 'cancelled', message: string): EnvResult => {
    fs.rmSync(tmp, { recursive: true, force: true });
    return { ok: false, failure: { kind, message, command } };
  };
  const stream = { onOutput: (text: string) => host.output(text), token: host.token };
  fs.mkdirSync(paths.storage, { recursive: true });

  const minor = base.version.split('.').slice(0, 2).join('.');
  host.progress(`creating a Python ${minor} environment…`);
  host.info(`Creating the server environment: ${shellQuote([base.executable, '-m', 'venv', tmp])}`);
  const venv = await host.run(base.executable, ['-m', 'venv', tmp], { timeoutMs: VENV_TIMEOUT_MS, ...stream });
  if (venv.code !== 0) {
    return venv.error?.message === 'cancelled'
      ? fail('cancelled', 'the setup was cancelled')
      : fail('venv', `${base.executable} -m venv failed (${why(venv)})`);
  }
  host.progress(`installing tokenline ${bundle.version} and its dependencies (pip)…`);
  for (const args of installArgs(paths.bundled, bundle.version)) {
    host.info(`Running: ${shellQuote([tmpPy, ...args])}`);
    const pip = await host.run(tmpPy, [...args, ...QUIET_PIP], { timeoutMs: PIP_TIMEOUT_MS, ...stream });
    if (pip.code !== 0) {
      return pip.error?.message === 'cancelled'
        ? fail('cancelled', 'the setup was cancelled')
        : fail('install', `pip install failed (${why(pip)})`);
    }
  }
  try {
    fs.renameSync(tmp, dir);
  } catch (err) {
    // Another window finished first: use its environment when it is ready.
    fs.rmSync(tmp, { recursive: true, force: true });
    const ready = await readyEnv(paths, bundle, host);
    if (ready) {
      return { ok: true, python: ready, created: false };
    }
    return fail('install', `cannot move the new environment to ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  removeOtherEnvs(paths, dir, host);
  host.info(`The server environment is ready: ${dir}.`);
  return { ok: true, python: envPython(dir, paths.platform), created: true };
}

/**
 * Environments of earlier bundles are not used again; a temporary one older than a day was left
 * by an install that never finished (VS Code closed during it).
 */
function removeOtherEnvs(paths: EnvPaths, keep: string, host: EnvHost): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of fs.readdirSync(paths.storage)) {
    const p = path.join(paths.storage, name);
    const stale = name.startsWith('tmp-') && fs.statSync(p).mtimeMs < dayAgo;
    if ((name.startsWith('env-') && p !== keep) || stale) {
      host.info(`Removing an environment that is no longer used: ${p}`);
      fs.rmSync(p, { recursive: true, force: true });
    }
  }
}

/** A process failure in one line: pip's first ERROR line, else stderr, else the exit code. */
export function why(r: RunResult): string {
  if (r.error) {
    return r.error.message;
  }
  const lines = r.stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  // pip says what went wrong on its first ERROR line; elsewhere (venv, a broken interpreter) the
  // start of stderr carries the reason and the advice, e.g. Debian's "apt install python3-venv".
  const detail = lines.find((l) => l.startsWith('ERROR:')) ?? lines.join(' ').replace(/\s+/g, ' ');
  const text = detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
  return text ? `exit code ${r.code}: ${text}` : `exit code ${r.code}`;
}
