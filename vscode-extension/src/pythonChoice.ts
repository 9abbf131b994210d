// Which Python the bundled server's environment is made with, and how its core gets there. Every
// candidate (the Python extension's interpreter, then python3, python3.14 … python on PATH) is
// asked its version, platform and whether it can compile a C extension; the first that fits a
// bundled compiled wheel wins, else the first whose dependencies the .vsix carries, else the first
// that can compile. Its core then comes from the compiled wheel, else is compiled from the bundled
// sdist when a C compiler and Python's headers are there, else is the pure-Python one.
//
// No `vscode` import: probing runs through the caller's runner, so it is unit-tested.
import { PURE_CORE_COST } from './format';
import type { Runner, RunResult } from './process';

export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** An interpreter to try: the Python extension's, or a name looked up on PATH. */
export interface Candidate {
  command: string;
  args?: string[];
  /** For messages: "the Python extension's interpreter", "python3 on PATH". */
  from: string;
}

/** What a candidate said about itself (the lines of PROBE). */
export interface BasePython {
  /** Absolute path (sys.executable). */
  executable: string;
  version: string;
  from?: string;
  implementation?: string;
  /** sysconfig.get_platform(): "linux-x86_64", "macosx-11.0-arm64", "win-amd64". */
  platform?: string;
  freeThreaded?: boolean;
  /** The C compiler it builds extensions with, found on this machine ("" when none is). */
  compiler?: string;
  /** Python.h is installed (a -dev package on Debian and Ubuntu). */
  headers?: boolean;
}

/** What the .vsix carries, as far as the choice goes (bundle.json and bundled/deps/deps.json). */
export interface Carried {
  wheels: string[];
  sdist?: string;
  /** The linux-x64 .vsix: the Pythons whose dependencies (and build requirements) it carries. */
  offline?: { pythons: string[]; build: string[] };
}

export type CorePlan =
  | { kind: 'wheel'; wheel: string }
  | { kind: 'compile'; compiler: string; reason: string }
  | { kind: 'pure'; reason: string };

export interface Choice {
  python: BasePython;
  core: CorePlan;
  /** Its dependencies come from bundled/deps, not the package index. */
  offline: boolean;
}

// One line each, so that an old Python that fails half-way still says its version first.
export const PROBE = [
  'import os, sys',
  'print("%d.%d.%d" % sys.version_info[:3]); print(sys.executable)',
  'import shutil, sysconfig',
  'print(sys.implementation.name); print(sysconfig.get_platform())',
  'print(1 if sysconfig.get_config_var("Py_GIL_DISABLED") else 0)',
  'vswhere = os.path.join(os.environ.get("ProgramFiles(x86)", ""), "Microsoft Visual Studio", "Installer", "vswhere.exe")',
  'cc = (vswhere if os.path.isfile(vswhere) else "") if os.name == "nt" else shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0])',
  'print(cc or "")',
  'print(1 if os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 0)',
].join('\n');

const CHECK_TIMEOUT_MS = 60_000;

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

/** "3.11.7" >= 3.10? */
export function supported(version: string): boolean {
  const [major, minor] = version.split('.').map((x) => Number(x));
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** PROBE's output, or undefined when it lacks the version and the executable. */
export function parseProbe(stdout: string, from: string): BasePython | undefined {
  const [version, executable, implementation, platform, freeThreaded, compiler, headers] = stdout.trim().split(/\r?\n/);
  if (!version || !executable) {
    return undefined;
  }
  const more =
    headers === undefined
      ? {}
      : { implementation, platform, freeThreaded: freeThreaded === '1', compiler, headers: headers === '1' };
  return { executable, version, from, ...more };
}

/**
 * Every candidate that runs Python 3.10 or newer (each interpreter once), in the candidates'
 * order, or a message naming what each one was when none does.
 */
export async function findPythons(candidates: Candidate[], run: Runner): Promise<BasePython[] | string> {
  const seen: string[] = [];
  const missing: string[] = [];
  const executables = new Set<string>();
  const found: BasePython[] = [];
  for (const c of candidates) {
    const r = await run(c.command, [...(c.args ?? []), '-c', PROBE], { timeoutMs: CHECK_TIMEOUT_MS });
    const p = parseProbe(r.stdout, c.from);
    // An old Python (2.7) stops half-way through the probe, after its version.
    if (!p || (r.code !== 0 && supported(p.version))) {
      if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
        missing.push(c.command);
      } else {
        seen.push(`${c.from} does not run (${why(r)})`);
      }
    } else if (executables.has(p.executable)) {
      // python3 and python are often the same interpreter: taken and named once.
    } else if (!supported(p.version)) {
      seen.push(`${c.from} is Python ${p.version} (${p.executable})`);
    } else {
      found.push(p);
    }
    if (p) {
      executables.add(p.executable);
    }
  }
  if (found.length > 0) {
    return found;
  }
  if (missing.length > 0) {
    seen.push(`not found: ${missing.join(', ')}`);
  }
  return seen.join('; ');
}

/** The compiled wheel that fits this Python (CPython of its minor version, its platform). */
export function fittingWheel(p: BasePython, wheels: readonly string[]): string | undefined {
  if (p.implementation !== 'cpython' || p.freeThreaded || !p.platform) {
    return undefined;
  }
  const tag = `cp${minorOf(p.version).replace('.', '')}`;
  const platform = p.platform.replace(/[-.]/g, '_');
  return wheels.find((w) => w.endsWith(`-${tag}-${tag}-${platform}.whl`));
}

/** The bundled compiled wheels, for messages: "CPython 3.10, 3.11 on linux_x86_64". */
export function describeWheels(wheels: readonly string[]): string {
  const tags = wheels.map((w) => /-cp3(\d+)-cp3\d+-(.+)\.whl$/.exec(w)).filter((m) => m !== null);
  if (tags.length === 0) {
    return 'none';
  }
  const platforms = [...new Set(tags.map((m) => m[2]))].join(', ');
  return `CPython ${tags.map((m) => `3.${m[1]}`).join(', ')} on ${platforms}`;
}

/** The .vsix carries this Python's dependencies (the linux-x64 one, a CPython it was built for). */
export function offlineFor(p: BasePython, c: Carried): boolean {
  return (
    c.offline !== undefined &&
    p.implementation === 'cpython' &&
    !p.freeThreaded &&
    p.platform === 'linux-x86_64' &&
    c.offline.pythons.includes(minorOf(p.version))
  );
}

const canCompile = (p: BasePython, c: Carried) => Boolean(c.sdist && p.compiler && p.headers);

/** The Python to make the environment with, and where its core comes from. */
export function choosePython(found: readonly BasePython[], carried: Carried): Choice {
  const rank = (p: BasePython, i: number) => [
    fittingWheel(p, carried.wheels) ? 0 : 1,
    offlineFor(p, carried) ? 0 : 1,
    canCompile(p, carried) ? 0 : 1,
    i,
  ];
  const byRank = found.map((p, i) => ({ p, key: rank(p, i) }));
  byRank.sort((a, b) => cmp(a.key, b.key));
  const python = byRank[0].p;
  const offline = offlineFor(python, carried);
  const wheel = fittingWheel(python, carried.wheels);
  if (wheel) {
    return { python, offline, core: { kind: 'wheel', wheel } };
  }
  const compiled = carried.wheels.filter((w) => !w.endsWith('-none-any.whl'));
  const none = `no bundled compiled core fits Python ${python.version}${python.freeThreaded ? ' (free-threaded)' : ''} on ${python.platform ?? 'this platform'} (they are for ${describeWheels(compiled)})`;
  if (canCompile(python, carried)) {
    return { python, offline, core: { kind: 'compile', compiler: python.compiler!, reason: `${none}: compiling it from the bundled source distribution with ${python.compiler}` } };
  }
  const missing = !carried.sdist
    ? 'this build of the extension carries no source distribution'
    : !python.compiler
      ? 'no C compiler was found to compile it (cc, gcc or clang; Visual Studio Build Tools on Windows)'
      : `Python.h of Python ${minorOf(python.version)} is missing (on Debian and Ubuntu: python${minorOf(python.version)}-dev)`;
  return { python, offline, core: { kind: 'pure', reason: `${none}, and ${missing}: the server runs the pure-Python core (${PURE_CORE_COST})` } };
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      return a[i] - b[i];
    }
  }
  return 0;
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
