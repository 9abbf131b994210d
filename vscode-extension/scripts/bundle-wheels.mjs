// Builds the Tokenline packages every .vsix carries into bundled/ (run by `npm run package`):
//   - wheels/: the core compiled with mypyc for each CPython 3.10+ this machine has (pythons.mjs
//     finds them: python3.x on PATH, pyenv versions), which pip picks wherever its tags match
//     the user's Python, and a pure-Python wheel (TOKENLINE_NO_MYPYC=1) for every other Python;
//   - sdist/: the source distribution, which the extension compiles on first start for a Python
//     no compiled wheel fits when a C compiler is there;
//   - pip/: pip's own wheel, which the extension runs pip from (`python pip.whl/pip install …`), so
//     that its environment is made without pip (`venv --without-pip`: no ensurepip, 7 s less);
//   - requirements.txt: tokenline's dependencies, read from the wheel (what the extension installs);
//   - bundle.json: the version, an id of these files (which names the private environment they go
//     into: a new id means a new environment), the wheels, the sdist and pip's wheel.
//
// Each build runs pip in a private virtual environment per Python (build/wheel-env-3.X), two
// builds at a time (each mypyc build is mostly one C compile).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  basePython,
  ext,
  buildEnv,
  bundled,
  fail,
  findPythons,
  log,
  output,
  parallel,
  pipEnv,
  repo,
  run,
  runAsync,
  zipNames,
} from './pythons.mjs';

const TAG = 'bundle-wheels';
const wheelsDir = path.join(bundled, 'wheels');
const sdistDir = path.join(bundled, 'sdist');
const pipDir = path.join(bundled, 'pip');
const isNative = (names) => names.some((n) => /\.(so|pyd)$/.test(n));

const pythons = findPythons(TAG);
const base = pythons.find((p) => p.command === basePython) ?? pythons[pythons.length - 1];
if (!base) {
  fail(TAG, `no CPython 3.10+ with its headers found (tried ${basePython}, python3.10 … python3.14, pyenv)`);
}
log(TAG, `compiling the core for CPython ${pythons.map((p) => p.minor).join(', ')}`);
fs.rmSync(bundled, { recursive: true, force: true });
fs.mkdirSync(wheelsDir, { recursive: true });
fs.mkdirSync(sdistDir, { recursive: true });
const envs = new Map(pythons.map((p) => [p.minor, buildEnv(TAG, p)]));
const baseEnv = envs.get(base.minor);

// The sdist first (no mypyc: its setup.py compiles when pip builds it), then every wheel from it,
// as the extension's compile on first start does: each build unpacks it into a folder of its own.
run(TAG, baseEnv, ['-m', 'pip', 'install', '--quiet', 'build', 'setuptools>=69', 'wheel'], pipEnv);
run(TAG, baseEnv, ['-m', 'build', '--sdist', '--no-isolation', '--skip-dependency-check', '--outdir', sdistDir, repo], {
  ...pipEnv,
  TOKENLINE_NO_MYPYC: '1',
});
const sdists = fs.readdirSync(sdistDir).filter((f) => f.endsWith('.tar.gz'));
if (sdists.length !== 1) {
  fail(TAG, `expected one sdist, got: ${sdists.join(', ')}`);
}
const sdist = path.join(sdistDir, sdists[0]);
const started = Date.now();
const builds = await parallel(
  pythons.map((p) => async () => {
    const out = path.join(ext, 'build', `wheels-${p.minor}`);
    fs.rmSync(out, { recursive: true, force: true });
    const args = ['-m', 'pip', 'wheel', '--no-deps', '--no-cache-dir', '--wheel-dir', out, sdist];
    const r = await runAsync(TAG, envs.get(p.minor), args, { ...pipEnv, TOKENLINE_NO_MYPYC: '' });
    return { p, out, ...r };
  }),
);
for (const b of builds) {
  const wheels = fs.existsSync(b.out) ? fs.readdirSync(b.out).filter((f) => f.endsWith('.whl')) : [];
  if (b.code !== 0 || wheels.length !== 1 || !isNative(zipNames(baseEnv, path.join(b.out, wheels[0])))) {
    process.stderr.write(b.output);
    fail(TAG, `the compiled build for Python ${b.p.version} failed (exit code ${b.code}, wheels: ${wheels.join(', ')})`);
  }
  fs.copyFileSync(path.join(b.out, wheels[0]), path.join(wheelsDir, wheels[0]));
}
log(TAG, `compiled ${builds.length} wheels in ${Math.round((Date.now() - started) / 1000)} s`);
run(TAG, baseEnv, ['-m', 'pip', 'wheel', '--no-deps', '--no-cache-dir', '--wheel-dir', wheelsDir, sdist], { ...pipEnv, TOKENLINE_NO_MYPYC: '1' });

run(TAG, baseEnv, ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--dest', pipDir, 'pip'], pipEnv);
const pips = fs.readdirSync(pipDir).filter((f) => /^pip-.*-py3-none-any\.whl$/.test(f));
if (pips.length !== 1) {
  fail(TAG, `expected one pip wheel, got: ${pips.join(', ')}`);
}

const wheels = fs.readdirSync(wheelsDir).filter((f) => f.endsWith('.whl')).sort();
const pure = wheels.filter((f) => f.endsWith('-py3-none-any.whl'));

if (pure.length !== 1 || isNative(zipNames(baseEnv, path.join(wheelsDir, pure[0])))) {
  fail(TAG, `expected one pure-Python wheel, got: ${wheels.join(', ')}`);
}
const version = /^tokenline-([^-]+)-/.exec(pure[0])[1];
checkWheel(path.join(wheelsDir, pure[0]));

const metadata = output(TAG, baseEnv, [
  '-c',
  'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read(sys.argv[2]).decode())',
  path.join(wheelsDir, pure[0]),
  `tokenline-${version}.dist-info/METADATA`,
]);
// The dependencies without the extras ("; extra == 'test'"): what the server needs to run.
const requirements = [...metadata.matchAll(/^Requires-Dist: (.+)$/gm)].map((m) => m[1].trim()).filter((r) => !/\bextra\s*==/.test(r));
if (requirements.length === 0) {
  fail(TAG, `no Requires-Dist in ${pure[0]}`);
}
fs.writeFileSync(path.join(bundled, 'requirements.txt'), `${requirements.join('\n')}\n`);
const hash = createHash('sha256');
for (const f of [...wheels.map((w) => path.join(wheelsDir, w)), sdist, path.join(pipDir, pips[0])]) {
  hash.update(path.basename(f)).update(fs.readFileSync(f));
}
const bundle = { version, id: hash.digest('hex').slice(0, 12), wheels, sdist: sdists[0], pip: pips[0] };
fs.writeFileSync(path.join(bundled, 'bundle.json'), `${JSON.stringify(bundle, null, 2)}\n`);
log(TAG, JSON.stringify(bundle));

/**
 * The sources of the package in the repository (setup's package-dir: cli/, core/, server/, the
 * bundled model) are all in the pure wheel built from the sdist: nothing fell out of the sdist.
 */
function checkWheel(wheel) {
  const inWheel = new Set(zipNames(baseEnv, wheel));
  const dirs = { cli: 'tokenline', core: 'tokenline/core', server: 'tokenline/server', 'core/models': 'tokenline/core/models' };
  const missing = [];
  for (const [dir, pkg] of Object.entries(dirs)) {
    for (const f of fs.readdirSync(path.join(repo, dir))) {
      const kept = f.endsWith('.py') || (dir === 'core/models' && /\.(model|txt)$/.test(f));
      if (kept && !inWheel.has(`${pkg}/${f}`)) {
        missing.push(`${dir}/${f}`);
      }
    }
  }
  if (missing.length > 0) {
    fail(TAG, `the wheel built from the sdist lacks ${missing.join(', ')}`);
  }
}
