// The server the .vsix carries: bundled/wheels holds the tokenline wheels (the core compiled with
// mypyc for each CPython the build machine had, and a pure-Python one), bundled/sdist its source,
// bundled/bundle.json their version and id; the linux-x64 .vsix adds bundled/deps, every wheel
// tokenline needs. On first start they are installed into a private virtual environment in the
// extension's global storage, made with the Python pythonChoice.ts picks: its core from the
// compiled wheel that fits, else compiled from the sdist, else pure; the dependencies from
// bundled/deps when it carries them for that Python, else from the package index (through VS
// Code's proxy, see pipProxy.ts). Later starts reuse that environment; a new bundle (another id)
// gets a new one.
//
// No `vscode` import: the caller passes a process runner, a log and a progress callback, so every
// path (no Python, an old Python, venv or pip failing, reuse) is unit-tested with a fake runner.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PURE_CORE_COST, shellQuote } from './format';
import type { Cancellation, Runner } from './process';
import { Carried, Choice, minorOf, why } from './pythonChoice';

export interface Bundle extends Carried {
  version: string;
  /** Hash of the bundled wheels and sdist: names the environment they are installed into. */
  id: string;
  /** pip's wheel in bundled/pip: the environment is made without pip and pip runs from it. */
  pip?: string;
}

export interface EnvHost {
  run: Runner;
  info(message: string): void;
  warn(message: string): void;
  /** Process output while installing, as it comes. */
  output(text: string): void;
  /** One-line progress ("Creating a Python 3.11 environment…"). */
  progress(message: string): void;
  token?: Cancellation;
  /** The environment pip runs in (VS Code's proxy settings added); else the extension host's. */
  env?: NodeJS.ProcessEnv;
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
const VERSION_CHECK = 'import importlib.metadata as m; print(m.version("tokenline"))';

/** bundled/bundle.json (and deps/deps.json), or why it cannot be read (a build without `npm run package`). */
export function readBundle(bundledDir: string): Bundle | string {
  const file = path.join(bundledDir, 'bundle.json');
  try {
    const b = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Bundle>;
    if (typeof b.version === 'string' && typeof b.id === 'string' && Array.isArray(b.wheels) && b.wheels.length > 0) {
      const sdist = typeof b.sdist === 'string' ? { sdist: b.sdist } : {};
      const pip = typeof b.pip === 'string' ? { pip: b.pip } : {};
      return { version: b.version, id: b.id, wheels: b.wheels, ...sdist, ...pip, ...readDeps(bundledDir) };
    }
    return `${file} lacks version, id or wheels`;
  } catch (err) {
    return `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** bundled/deps/deps.json of the linux-x64 .vsix: for which Pythons it carries the dependencies. */
function readDeps(bundledDir: string): Pick<Carried, 'offline'> {
  try {
    const d = JSON.parse(fs.readFileSync(path.join(bundledDir, 'deps', 'deps.json'), 'utf8')) as { pythons?: unknown; build?: unknown };
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    return { offline: { pythons: strings(d.pythons), build: strings(d.build) } };
  } catch {
    return {};
  }
}

export function envDir(paths: EnvPaths, bundle: Bundle): string {
  return path.join(paths.storage, `env-${bundle.version}-${bundle.id}`);
}

export function envPython(dir: string, platform: string): string {
  return platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

/** Where pip finds packages for the dependencies: bundled/deps alone, or the package index. */
function sources(bundledDir: string, offline: boolean): string[] {
  return offline ? ['--no-index', '--find-links', path.join(bundledDir, 'deps')] : [];
}

/**
 * tokenline itself only from the bundled wheels (never from the index, where another package
 * could take the name): pip takes the compiled one where its tags match, the pure one elsewhere.
 */
export function wheelArgs(bundledDir: string, version: string): string[] {
  return ['-m', 'pip', 'install', '--no-index', '--no-deps', '--find-links', path.join(bundledDir, 'wheels'), `tokenline==${version}`];
}

/**
 * tokenline compiled from the bundled sdist (its build requirements from bundled/deps or the
 * index); no cache, so that pip never takes a wheel it built from another sdist of that name.
 */
export function compileArgs(bundledDir: string, sdist: string, offline: boolean): string[] {
  return ['-m', 'pip', 'install', '--no-deps', '--no-cache-dir', ...sources(bundledDir, offline), path.join(bundledDir, 'sdist', sdist)];
}

/** tokenline's dependencies (bundled/requirements.txt, read from the wheel). */
export function depsArgs(bundledDir: string, offline: boolean): string[] {
  return ['-m', 'pip', 'install', ...sources(bundledDir, offline), '-r', path.join(bundledDir, 'requirements.txt')];
}

/** The two pip installs that make a working environment: the bundled wheel, then the dependencies. */
export function installArgs(bundledDir: string, version: string, offline = false): string[][] {
  return [wheelArgs(bundledDir, version), depsArgs(bundledDir, offline)];
}

/** For pip run by the extension: no prompts, no progress bars in the log, no upgrade advice. */
export const QUIET_PIP = ['--disable-pip-version-check', '--no-input', '--progress-bar', 'off'];

/**
 * Into the private environment, also: no byte-compiling of every module of 31 packages (half of
 * the install's time); the few the server imports are compiled when it first imports them.
 */
const FAST_PIP = ['--no-compile'];

/** What to run by hand to make the environment the extension looks for (from its storage folder). */
export function manualCommand(base: string, dir: string, paths: EnvPaths, bundle: Bundle, offline = false): string {
  const name = path.basename(dir);
  const py = path.relative(paths.storage, envPython(dir, paths.platform));
  const cd = paths.platform === 'win32' ? 'cd /d' : 'cd';
  const steps = [
    `${cd} ${shellQuote([paths.storage])}`,
    shellQuote([base, '-m', 'venv', name]),
    ...installArgs(paths.bundled, bundle.version, offline).map((a) => shellQuote([py, ...a])),
  ];
  return steps.join(' && ');
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

/** Creates the environment of this bundle with the chosen Python; on failure removes what it made. */
export async function createEnv(paths: EnvPaths, bundle: Bundle, choice: Choice, host: EnvHost): Promise<EnvResult> {
  const base = choice.python;
  const dir = envDir(paths, bundle);
  const command = manualCommand(base.executable, dir, paths, bundle, choice.offline);
  // Built under a temporary name and renamed at the end: a half-made environment is never taken
  // for a ready one, and two windows starting at once cannot install into the same folder.
  const tmp = path.join(paths.storage, `tmp-${bundle.id}-${randomBytes(4).toString('hex')}`);
  const fail = (kind: 'venv' | 'install' | 'cancelled', message: string): EnvResult => {
    fs.rmSync(tmp, { recursive: true, force: true });
    return { ok: false, failure: { kind, message, command } };
  };
  fs.mkdirSync(paths.storage, { recursive: true });

  host.progress(`creating a Python ${minorOf(base.version)} environment…`);
  // With pip's wheel bundled, no pip in the environment: ensurepip takes seconds.
  const venvArgs = ['-m', 'venv', ...(bundle.pip ? ['--without-pip'] : []), tmp];
  host.info(`Creating the server environment: ${shellQuote([base.executable, ...venvArgs])}`);
  const venv = await host.run(base.executable, venvArgs, { timeoutMs: VENV_TIMEOUT_MS, ...stream(host) });
  if (venv.code !== 0) {
    return venv.error?.message === 'cancelled'
      ? fail('cancelled', 'the setup was cancelled')
      : fail('venv', `${base.executable} -m venv failed (${why(venv)})`);
  }
  const failure = await install(paths.bundled, bundle, choice, envPython(tmp, paths.platform), host);
  if (failure) {
    return failure === 'cancelled' ? fail('cancelled', 'the setup was cancelled') : fail('install', failure);
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

function stream(host: EnvHost) {
  return { onOutput: (text: string) => host.output(text), token: host.token, env: host.env };
}

/**
 * pip in the new environment (`-m pip`, or run from the bundled pip wheel): why it failed,
 * 'cancelled', or undefined when it worked.
 */
async function pip(python: string, args: string[], host: EnvHost, pipWheel?: string): Promise<string | undefined> {
  const run = pipWheel && args[0] === '-m' && args[1] === 'pip' ? [path.join(pipWheel, 'pip'), ...args.slice(2)] : args;
  host.info(`Running: ${shellQuote([python, ...run])}`);
  const r = await host.run(python, [...run, ...QUIET_PIP, ...FAST_PIP], { timeoutMs: PIP_TIMEOUT_MS, ...stream(host) });
  if (r.code === 0) {
    return undefined;
  }
  return r.error?.message === 'cancelled' ? 'cancelled' : `pip install failed (${why(r)})`;
}

/** tokenline (compiled wheel, compiled now, or pure) and its dependencies into the new environment. */
async function install(bundled: string, bundle: Bundle, choice: Choice, python: string, host: EnvHost): Promise<string | undefined> {
  const core = choice.core;
  const minor = minorOf(choice.python.version);
  const pipWheel = bundle.pip ? path.join(bundled, 'pip', bundle.pip) : undefined;
  let compiled = false;
  if (core.kind === 'compile' && bundle.sdist) {
    host.info(`Compiling the core: ${core.reason}.`);
    host.progress(`compiling the core for Python ${minor} (a few minutes)…`);
    const buildOffline = choice.offline && (bundle.offline?.build ?? []).includes(minor);
    const failed = await pip(python, compileArgs(bundled, bundle.sdist, buildOffline), host, pipWheel);
    if (failed === 'cancelled') {
      return failed;
    }
    if (failed) {
      host.warn(`Compiling the core failed (${failed}); the server runs the pure-Python core instead (${PURE_CORE_COST}).`);
    } else {
      host.info(`The core is compiled for Python ${choice.python.version}.`);
      compiled = true;
    }
  } else if (core.kind === 'pure') {
    host.warn(`The server runs the pure-Python core: ${core.reason}.`);
  } else if (core.kind === 'wheel') {
    host.info(`The bundled compiled core fits Python ${choice.python.version}: ${core.wheel}.`);
  }
  const from = choice.offline ? 'the wheels bundled with the extension (no network)' : 'the package index';
  const what = compiled ? 'its dependencies' : `tokenline ${bundle.version} and its dependencies`;
  host.info(`Installing ${what} from ${from}.`);
  host.progress(`installing ${what} from ${from}…`);
  const steps = compiled ? [depsArgs(bundled, choice.offline)] : installArgs(bundled, bundle.version, choice.offline);
  for (const args of steps) {
    const failed = await pip(python, args, host, pipWheel);
    if (failed) {
      return failed;
    }
  }
  return undefined;
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
