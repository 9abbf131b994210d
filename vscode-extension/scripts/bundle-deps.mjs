// Downloads every wheel tokenline needs for the linux-x64 .vsix into bundled/deps (run by
// `npm run package` after bundle-wheels.mjs), so that its first start installs with
// `pip install --no-index --find-links bundled/deps` and needs no network:
//   - the dependency closure of bundled/requirements.txt, for each CPython in
//     TOKENLINE_DEP_PYTHONS (default 3.10 … 3.14), as manylinux wheels for x86_64 that run
//     wherever VS Code does (glibc 2.28 or newer): binary only, one flat folder, each file once;
//   - for each of those Pythons that no bundled compiled wheel fits (3.14 here), the build
//     requirements of the sdist (pyproject.toml's [build-system] requires: setuptools, mypy, …),
//     so that the extension can compile the core on first start without the index;
//   - deps.json: those two lists of Pythons, which the extension reads.
// Environment markers (tomli on 3.10) are evaluated by pip for the interpreter that runs it: each
// version is downloaded with an interpreter of that version where this machine has one, else
// with the newest one it has (and --python-version). Then pip resolves tokenline for each version
// from bundled/ alone (--no-index), which proves the closure complete.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildEnv, bundled, ext, fail, findPythons, log, pipEnv, repo, run } from './pythons.mjs';

const TAG = 'bundle-deps';
const depsDir = path.join(bundled, 'deps');
const wanted = (process.env.TOKENLINE_DEP_PYTHONS || '3.10 3.11 3.12 3.13 3.14').trim().split(/\s+/);
// VS Code needs glibc 2.28 on Linux: every manylinux wheel up to manylinux_2_28 runs there.
const platforms = [
  ...Array.from({ length: 24 }, (_, i) => `manylinux_2_${28 - i}_x86_64`),
  'manylinux2014_x86_64',
  'manylinux2010_x86_64',
  'manylinux1_x86_64',
];

const bundle = JSON.parse(fs.readFileSync(path.join(bundled, 'bundle.json'), 'utf8'));
const compiledFor = new Set(
  bundle.wheels.map((w) => /-cp3(\d+)-cp3\1-linux_x86_64\.whl$/.exec(w)?.[1]).filter(Boolean).map((m) => `3.${m}`),
);
const pythons = findPythons(TAG);
const newest = pythons[pythons.length - 1];
if (!newest) {
  fail(TAG, 'no CPython 3.10+ found to run pip with');
}
const buildRequires = readBuildRequires();
fs.rmSync(depsDir, { recursive: true, force: true });
fs.mkdirSync(depsDir, { recursive: true });

const building = wanted.filter((v) => !compiledFor.has(v));
for (const version of wanted) {
  const python = interpreter(version);
  const download = ['-m', 'pip', 'download', '--quiet', '--dest', depsDir, ...target(version)];
  run(TAG, python, [...download, '-r', path.join(bundled, 'requirements.txt')], pipEnv);
  if (building.includes(version)) {
    run(TAG, python, [...download, ...buildRequires], pipEnv);
  }
}
const files = fs.readdirSync(depsDir).filter((f) => f.endsWith('.whl'));
const deps = { platform: 'linux-x64', pythons: wanted, build: building };
fs.writeFileSync(path.join(depsDir, 'deps.json'), `${JSON.stringify(deps, null, 2)}\n`);

// The closure is complete: for each version, pip resolves tokenline, its dependencies and (where
// the core is compiled) the build requirements from bundled/ alone, as it will on first start.
const check = path.join(ext, 'build', 'deps-check');
for (const version of wanted) {
  fs.rmSync(check, { recursive: true, force: true });
  const offline = ['-m', 'pip', 'download', '--quiet', '--no-index', '--dest', check, ...target(version)];
  offline.push('--find-links', depsDir, '--find-links', path.join(bundled, 'wheels'), `tokenline==${bundle.version}`);
  run(TAG, interpreter(version), [...offline, ...(building.includes(version) ? buildRequires : [])], pipEnv);
}
const mb = files.reduce((n, f) => n + fs.statSync(path.join(depsDir, f)).size, 0) / 2 ** 20;
log(TAG, `${files.length} wheels, ${mb.toFixed(1)} MiB, for CPython ${wanted.join(', ')}; build requirements for ${building.join(', ') || 'none'}`);

/** pip's options that select the wheels of CPython `version` on manylinux x86_64. */
function target(version) {
  const args = ['--only-binary=:all:', ...platforms.flatMap((p) => ['--platform', p]), '--implementation', 'cp'];
  return [...args, '--python-version', version];
}

/** The build environment's Python of that version, else of the newest one this machine has. */
function interpreter(version) {
  return buildEnv(TAG, pythons.find((p) => p.minor === version) ?? newest);
}

/** The sdist's build requirements, from pyproject.toml's [build-system] table. */
function readBuildRequires() {
  const text = fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8');
  const m = /^\[build-system\][^[]*?^requires\s*=\s*\[([^\]]*)\]/m.exec(text);
  const requires = m ? [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]) : [];
  if (requires.length === 0) {
    fail(TAG, 'pyproject.toml has no [build-system] requires');
  }
  return requires;
}
