// What the packaging scripts share: the paths, running a command (synchronously or two at a time),
// and the CPython interpreters this machine has to build for.
//
// Interpreters: TOKENLINE_BUILD_PYTHONS (space-separated commands or paths), else python3,
// python3.10 … python3.14 on PATH and every pyenv version ($PYENV_ROOT/versions/*, ~/.pyenv by
// default). One per minor version (the first found), CPython 3.10 or newer, not free-threaded (its
// ABI is another: cp313t), with the headers a C extension is compiled against.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ext = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repo = path.resolve(ext, '..');
export const bundled = path.join(ext, 'bundled');
export const windows = process.platform === 'win32';
export const basePython = process.env.TOKENLINE_BUILD_PYTHON || (windows ? 'python' : 'python3');

/** pip as the packaging scripts run it: no pip.conf of this machine, no version check. */
export const pipEnv = { PIP_CONFIG_FILE: os.devnull, PIP_FIND_LINKS: '', PIP_DISABLE_PIP_VERSION_CHECK: '1' };

export function log(tag, message) {
  console.log(`[${tag}] ${message}`);
}

export function fail(tag, message) {
  console.error(`[${tag}] ${message}`);
  process.exit(1);
}

/** Runs a command to its end with inherited output; exits on failure. */
export function run(tag, command, args, env = {}) {
  log(tag, shorten([command, ...args].join(' ')));
  const r = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error || r.status !== 0) {
    fail(tag, `failed: ${r.error?.message ?? `exit code ${r.status}`}`);
  }
}

/** A command for the log: a run of --platform options as its first and last. */
function shorten(line) {
  return line.replace(/--platform (\S+)( --platform \S+)* --platform (\S+)/, '--platform $1 … --platform $3');
}

/** Like run, but resolves with the exit code and keeps the output (for jobs run side by side). */
export function runAsync(tag, command, args, env = {}) {
  log(tag, [command, ...args].join(' '));
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ code: null, output: `${output}${err.message}\n` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Runs the jobs (functions returning promises) at most `limit` at a time, in order of start. */
export async function parallel(jobs, limit = Math.max(1, os.availableParallelism?.() ?? os.cpus().length)) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

const PROBE = [
  'import os, sys, sysconfig',
  'print("%d.%d.%d" % sys.version_info[:3])',
  'print(sys.executable)',
  'print(sys.implementation.name)',
  'print(1 if sysconfig.get_config_var("Py_GIL_DISABLED") else 0)',
  'print(1 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 0)',
].join('\n');

function probe(command) {
  const r = spawnSync(command, ['-c', PROBE], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    return undefined;
  }
  const [version, executable, implementation, freeThreaded, headers] = r.stdout.trim().split(/\r?\n/);
  const [major, minor] = version.split('.').map(Number);
  return { command, version, minor: `${major}.${minor}`, major, minorNumber: minor, executable, implementation, freeThreaded: freeThreaded === '1', headers: headers === '1' };
}

function pyenvPythons() {
  const root = process.env.PYENV_ROOT || path.join(os.homedir(), '.pyenv');
  const versions = path.join(root, 'versions');
  if (!fs.existsSync(versions)) {
    return [];
  }
  return fs
    .readdirSync(versions)
    .map((v) => path.join(versions, v, 'bin', 'python3'))
    .filter((p) => fs.existsSync(p));
}

/** The interpreters to build compiled wheels with, one per minor version, oldest first. */
export function findPythons(tag) {
  const listed = process.env.TOKENLINE_BUILD_PYTHONS?.trim();
  const candidates = listed
    ? listed.split(/\s+/)
    : [basePython, ...['10', '11', '12', '13', '14'].map((m) => `python3.${m}`), ...pyenvPythons()];
  const byMinor = new Map();
  for (const c of candidates) {
    const p = probe(c);
    if (!p || byMinor.has(p.minor)) {
      continue;
    }
    if (p.implementation !== 'cpython' || p.major !== 3 || p.minorNumber < 10 || p.freeThreaded) {
      log(tag, `skipping ${c} (${p.implementation} ${p.version}${p.freeThreaded ? ', free-threaded' : ''})`);
    } else if (!p.headers) {
      log(tag, `skipping ${c} (Python ${p.version} has no Python.h: install its -dev package)`);
    } else {
      byMinor.set(p.minor, p);
    }
  }
  if (listed && byMinor.size === 0) {
    fail(tag, `no usable CPython 3.10+ in TOKENLINE_BUILD_PYTHONS (${listed})`);
  }
  return [...byMinor.values()].sort((a, b) => a.minorNumber - b.minorNumber);
}

/** A private virtual environment per minor version (build/wheel-env-3.X), made once. */
export function buildEnv(tag, python) {
  const dir = path.join(ext, 'build', `wheel-env-${python.minor}`);
  const exe = path.join(dir, windows ? 'Scripts/python.exe' : 'bin/python');
  if (!fs.existsSync(exe)) {
    run(tag, python.command, ['-m', 'venv', dir]);
  }
  return exe;
}

/** A command's standard output; exits on failure. */
export function output(tag, command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    fail(tag, `${command} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
  }
  return r.stdout;
}

/** The names in a zip file (a wheel), read with the given Python. */
export function zipNames(python, file) {
  return output('zip', python, ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', file]).split(/\r?\n/);
}
