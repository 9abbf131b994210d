// Builds the Tokenline wheels the .vsix carries into bundled/wheels (run by `npm run package`):
//   - the core compiled with mypyc for the building interpreter (cp311 here), which pip picks
//     wherever its tags match the user's Python;
//   - a pure-Python wheel (TOKENLINE_NO_MYPYC=1), which pip picks everywhere else.
// and bundled/requirements.txt: tokenline's dependencies, read from the wheel (what the extension
// installs from the package index), and bundled/bundle.json: the version and an id of the wheels,
// which names the private environment they go into (a new id means a new environment).
//
// The wheels are built by pip in a private virtual environment (build/wheel-env), created with
// TOKENLINE_BUILD_PYTHON or python3 (python on Windows), so the interpreter needs no pip of its own.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(ext, '..');
const out = path.join(ext, 'bundled', 'wheels');
const windows = process.platform === 'win32';
const basePython = process.env.TOKENLINE_BUILD_PYTHON || (windows ? 'python' : 'python3');
const buildEnv = path.join(ext, 'build', 'wheel-env');
const envPython = path.join(buildEnv, windows ? 'Scripts/python.exe' : 'bin/python');

function run(command, args, env = {}) {
  console.log(`[bundle-wheels] ${[command, ...args].join(' ')}`);
  const r = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error || r.status !== 0) {
    console.error(`[bundle-wheels] failed: ${r.error?.message ?? `exit code ${r.status}`}`);
    process.exit(1);
  }
}

if (!fs.existsSync(envPython)) {
  run(basePython, ['-m', 'venv', buildEnv]);
}
fs.rmSync(path.join(ext, 'bundled'), { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const wheel = ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '--wheel-dir', out, repo];
run(envPython, wheel, { TOKENLINE_NO_MYPYC: '' });
run(envPython, wheel, { TOKENLINE_NO_MYPYC: '1' });

// Exactly one compiled and one pure wheel, or the .vsix would ship the wrong thing.
const wheels = fs.readdirSync(out).filter((f) => f.endsWith('.whl')).sort();
const pure = wheels.filter((f) => f.endsWith('-py3-none-any.whl'));
const compiled = wheels.filter((f) => !f.endsWith('-py3-none-any.whl'));
const listing = (f) =>
  spawnSync(envPython, ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', path.join(out, f)], {
    encoding: 'utf8',
  }).stdout;
const hasNative = (f) => /\.(so|pyd)$/m.test(listing(f));
if (pure.length !== 1 || compiled.length !== 1 || hasNative(pure[0]) || !hasNative(compiled[0])) {
  console.error(`[bundle-wheels] expected one compiled and one pure-Python wheel, got: ${wheels.join(', ')}`);
  process.exit(1);
}
const version = /^tokenline-([^-]+)-/.exec(pure[0])[1];
const metadata = spawnSync(
  envPython,
  ['-c', 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read(sys.argv[2]).decode())', path.join(out, pure[0]), `tokenline-${version}.dist-info/METADATA`],
  { encoding: 'utf8' },
).stdout;
// The dependencies without the extras ("; extra == 'test'"): what the server needs to run.
const requirements = [...metadata.matchAll(/^Requires-Dist: (.+)$/gm)].map((m) => m[1].trim()).filter((r) => !/\bextra\s*==/.test(r));
if (requirements.length === 0) {
  console.error(`[bundle-wheels] no Requires-Dist in ${pure[0]}`);
  process.exit(1);
}
fs.writeFileSync(path.join(ext, 'bundled', 'requirements.txt'), `${requirements.join('\n')}\n`);
const hash = createHash('sha256');
for (const f of wheels) {
  hash.update(f).update(fs.readFileSync(path.join(out, f)));
}
const bundle = { version, id: hash.digest('hex').slice(0, 12), wheels };
fs.writeFileSync(path.join(ext, 'bundled', 'bundle.json'), `${JSON.stringify(bundle, null, 2)}\n`);
console.log(`[bundle-wheels] ${JSON.stringify(bundle)}`);
