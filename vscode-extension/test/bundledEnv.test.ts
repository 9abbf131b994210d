// The bundled server's environment: creating (with a compiled wheel, compiling, pure, offline),
// reusing and failing, with a fake process runner and a real scratch folder as the extension's
// global storage. Finding and choosing the Python: pythonChoice.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Bundle, createEnv, EnvHost, EnvPaths, envDir, installArgs, manualCommand, readBundle, readyEnv } from '../src/bundledEnv';
import type { RunOptions, RunResult } from '../src/process';
import { BasePython, Choice, choosePython, why } from '../src/pythonChoice';

const bundle: Bundle = { version: '0.1.0', id: 'abc123def456', wheels: ['tokenline-0.1.0-py3-none-any.whl'] };
const COMPILED_311 = 'tokenline-0.1.0-cp311-cp311-linux_x86_64.whl';
/** What bundle-wheels.mjs and bundle-deps.mjs write for the linux-x64 .vsix. */
const linuxBundle: Bundle = {
  ...bundle,
  wheels: [COMPILED_311, ...bundle.wheels],
  sdist: 'tokenline-0.1.0.tar.gz',
  offline: { pythons: ['3.11', '3.14'], build: ['3.14'] },
};
const linux = (version: string, more: Partial<BasePython> = {}): BasePython => ({
  executable: `/usr/bin/python${version.split('.').slice(0, 2).join('.')}`,
  version,
  from: 'python3 on PATH',
  implementation: 'cpython',
  platform: 'linux-x86_64',
  freeThreaded: false,
  compiler: '/usr/bin/gcc',
  headers: true,
  ...more,
});
/** The choice the extension makes for one Python. */
const only = (p: BasePython, b: Bundle = bundle): Choice => choosePython([p], b);

interface Call {
  command: string;
  args: readonly string[];
}

type Answer = (command: string, args: readonly string[], options: RunOptions) => Partial<RunResult> | undefined;

const ok = (stdout = ''): Partial<RunResult> => ({ code: 0, stdout });
const enoent = (): Partial<RunResult> => ({ code: null, error: Object.assign(new Error('spawn ENOENT'), { code: 'ENOENT' }) });

/** A host whose runner answers with `answer` (ENOENT when it returns undefined) and records calls. */
function fakeHost(answer: Answer): EnvHost & { calls: Call[]; lines: string[]; progressed: string[] } {
  const calls: Call[] = [];
  const lines: string[] = [];
  const progressed: string[] = [];
  return {
    calls,
    lines,
    progressed,
    run: async (command, args, options) => {
      calls.push({ command, args });
      const r = answer(command, args, options) ?? enoent();
      return { code: null, stdout: '', stderr: '', ...r };
    },
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`WARN ${m}`),
    output: (t) => lines.push(t),
    progress: (m) => progressed.push(m),
  };
}

function scratch(): EnvPaths {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tokenline-env-'));
  const bundled = path.join(root, 'extension', 'bundled');
  fs.mkdirSync(path.join(bundled, 'wheels'), { recursive: true });
  return { storage: path.join(root, 'storage'), bundled, platform: 'linux' };
}

const isVersionCheck = (args: readonly string[]) => args.some((a) => a.includes('importlib.metadata'));
/** `python -m pip …`, or `python …/pip-X.whl/pip …`. */
const isPip = (args: readonly string[]) => args[1] === 'pip' || /\.whl[/\\]pip$/.test(args[0]);

/** venv makes <dir>/bin/python; pip succeeds; the version check answers `installed`. */
function workingRunner(installed = bundle.version): Answer {
  return (_command, args) => {
    if (args[0] === '-m' && args[1] === 'venv') {
      const dir = args[args.length - 1];
      fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'bin', 'python'), '');
      return ok();
    }
    if (isPip(args)) {
      return ok('Successfully installed tokenline-0.1.0\n');
    }
    if (isVersionCheck(args)) {
      return ok(`${installed}\n`);
    }
    return undefined;
  };
}

test('bundle.json: version, id and wheels, or a message naming the file', () => {
  const p = scratch();
  assert.match(readBundle(p.bundled) as string, /cannot read .*bundle\.json/);
  fs.writeFileSync(path.join(p.bundled, 'bundle.json'), JSON.stringify({ version: '0.1.0' }));
  assert.match(readBundle(p.bundled) as string, /lacks version, id or wheels/);
  fs.writeFileSync(path.join(p.bundled, 'bundle.json'), JSON.stringify(bundle));
  assert.deepEqual(readBundle(p.bundled), bundle);
  // The linux-x64 .vsix: the sdist, and deps/deps.json naming the Pythons it carries wheels for.
  const { offline, ...json } = linuxBundle;
  fs.writeFileSync(path.join(p.bundled, 'bundle.json'), JSON.stringify(json));
  fs.mkdirSync(path.join(p.bundled, 'deps'));
  fs.writeFileSync(path.join(p.bundled, 'deps', 'deps.json'), JSON.stringify({ platform: 'linux-x64', ...offline }));
  assert.deepEqual(readBundle(p.bundled), linuxBundle);
});

test('tokenline comes only from the bundled wheels; its dependencies from the index, or bundled/deps alone', () => {
  const [own, deps] = installArgs('/ext/bundled', '0.1.0');
  assert.deepEqual(own, ['-m', 'pip', 'install', '--no-index', '--no-deps', '--find-links', '/ext/bundled/wheels', 'tokenline==0.1.0']);
  assert.deepEqual(deps, ['-m', 'pip', 'install', '-r', '/ext/bundled/requirements.txt']);
  const [ownOffline, offline] = installArgs('/ext/bundled', '0.1.0', true);
  assert.deepEqual(ownOffline, own);
  assert.deepEqual(offline, ['-m', 'pip', 'install', '--no-index', '--find-links', '/ext/bundled/deps', '-r', '/ext/bundled/requirements.txt']);
});

test('the command to run by hand makes the environment the extension looks for', () => {
  const p: EnvPaths = { storage: '/home/me/.vscode/globalStorage/tokenline.tokenline', bundled: '/ext/bundled', platform: 'linux' };
  assert.equal(
    manualCommand('/usr/bin/python3', envDir(p, bundle), p, bundle),
    'cd /home/me/.vscode/globalStorage/tokenline.tokenline && /usr/bin/python3 -m venv env-0.1.0-abc123def456' +
      ' && env-0.1.0-abc123def456/bin/python -m pip install --no-index --no-deps --find-links /ext/bundled/wheels tokenline==0.1.0' +
      ' && env-0.1.0-abc123def456/bin/python -m pip install -r /ext/bundled/requirements.txt',
  );
  assert.ok(
    manualCommand('/usr/bin/python3', envDir(p, bundle), p, bundle, true).endsWith(
      ' && env-0.1.0-abc123def456/bin/python -m pip install --no-index --find-links /ext/bundled/deps -r /ext/bundled/requirements.txt',
    ),
  );
  const spaced = { ...p, storage: '/home/me/My Storage' };
  assert.ok(manualCommand('/usr/bin/python3', envDir(spaced, bundle), spaced, bundle).startsWith("cd '/home/me/My Storage' && "));
});

test('first start creates the environment, second start reuses it without installing', async () => {
  const p = scratch();
  // An environment of an earlier bundle is removed once the new one is ready.
  const earlier = path.join(p.storage, 'env-0.0.9-000000000000');
  fs.mkdirSync(earlier, { recursive: true });
  // A temporary folder of an install that never finished, two days ago, goes too; a recent one
  // (another window installing right now) stays.
  const abandoned = path.join(p.storage, 'tmp-000000000000-dead');
  const running = path.join(p.storage, 'tmp-abc123def456-live');
  fs.mkdirSync(abandoned);
  fs.mkdirSync(running);
  const twoDaysAgo = new Date(Date.now() - 48 * 3600_000);
  fs.utimesSync(abandoned, twoDaysAgo, twoDaysAgo);
  const first = fakeHost(workingRunner());
  assert.equal(await readyEnv(p, bundle, first), undefined, 'nothing to reuse yet');
  const r = await createEnv(p, bundle, only(linux('3.11.7')), first);
  const dir = envDir(p, bundle);
  assert.deepEqual(r, { ok: true, python: path.join(dir, 'bin', 'python'), created: true });
  const steps = first.calls.map((c) => [c.command, ...c.args.slice(0, 3)]);
  assert.equal(steps.length, 3);
  assert.deepEqual(steps[0], ['/usr/bin/python3.11', '-m', 'venv', steps[0][3]]);
  assert.match(steps[0][3], /tmp-abc123def456-/, 'built under a temporary name');
  assert.deepEqual(steps[1].slice(1), ['-m', 'pip', 'install']);
  assert.ok(first.progressed.some((m) => m.includes('Python 3.11')));
  assert.deepEqual(fs.readdirSync(p.storage).sort(), [path.basename(dir), path.basename(running)]);

  const second = fakeHost(workingRunner());
  assert.equal(await readyEnv(p, bundle, second), path.join(dir, 'bin', 'python'));
  assert.equal(second.calls.length, 1, 'one version check, no venv, no pip');
  assert.ok(isVersionCheck(second.calls[0].args));
  assert.ok(second.lines.some((l) => l.startsWith(`Using the server environment ${dir}`)));
});

test('an environment with another tokenline in it is not reused', async () => {
  const p = scratch();
  const py = path.join(envDir(p, bundle), 'bin', 'python');
  fs.mkdirSync(path.dirname(py), { recursive: true });
  fs.writeFileSync(py, '');
  const host = fakeHost(workingRunner('0.0.9'));
  assert.equal(await readyEnv(p, bundle, host), undefined);
  assert.ok(host.lines.some((l) => l.includes('is not usable')));
});

test('venv fails (no ensurepip): the message carries Python\'s advice, the command to run, nothing is left', async () => {
  const p = scratch();
  const debian =
    'The virtual environment was not created successfully because ensurepip is not\navailable.  On Debian/Ubuntu systems, you need to install the python3-venv\npackage using the following command.\n\n    apt install python3.11-venv\n\n';
  const host = fakeHost((c, a) => (a[1] === 'venv' ? { code: 1, stderr: debian } : workingRunner()(c, a, { timeoutMs: 1 })));
  const r = await createEnv(p, bundle, only(linux('3.11.2')), host);
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.failure.kind === 'venv');
  if (!r.ok && r.failure.kind === 'venv') {
    assert.match(r.failure.message, /^\/usr\/bin\/python3\.11 -m venv failed \(exit code 1: .*apt install python3\.11-venv/);
    assert.equal(r.failure.command, manualCommand('/usr/bin/python3.11', envDir(p, bundle), p, bundle));
    assert.ok(r.failure.command.startsWith(`cd ${p.storage} && /usr/bin/python3.11 -m venv env-0.1.0-abc123def456 && `));
  }
  assert.deepEqual(fs.readdirSync(p.storage), [], 'the half-made environment is removed');
});

test('pip fails (index unreachable): pip\'s error, both pip commands to run by hand, nothing is left', async () => {
  const p = scratch();
  const pipError =
    "WARNING: Retrying (Retry(total=4...)) after connection broken by 'NewConnectionError'\nERROR: Could not find a version that satisfies the requirement sentencepiece>=0.2.0 (from tokenline) (from versions: none)\nERROR: No matching distribution found for sentencepiece>=0.2.0\n";
  const host = fakeHost((c, a, o) =>
    isPip(a) && !a.includes('--no-index') ? { code: 1, stderr: pipError } : workingRunner()(c, a, o),
  );
  const r = await createEnv(p, bundle, only(linux('3.11.7', { executable: '/usr/bin/python3' })), host);
  assert.ok(!r.ok && r.failure.kind === 'install');
  if (!r.ok && r.failure.kind === 'install') {
    assert.equal(
      r.failure.message,
      'pip install failed (exit code 1: ERROR: Could not find a version that satisfies the requirement sentencepiece>=0.2.0 (from tokenline) (from versions: none))',
    );
    assert.equal(r.failure.command, manualCommand('/usr/bin/python3', envDir(p, bundle), p, bundle));
  }
  // The extension's own runs keep pip quiet and non-interactive.
  const pips = host.calls.filter((c) => isPip(c.args));
  assert.equal(pips.length, 2);
  assert.ok(pips.every((c) => c.args.includes('--no-input') && c.args.includes('--disable-pip-version-check')));
  assert.deepEqual(fs.readdirSync(p.storage), []);
});

test('a cancelled or timed-out install says so', async () => {
  const p = scratch();
  const cancelled = fakeHost((c, a, o) => (isPip(a) ? { code: null, error: new Error('cancelled') } : workingRunner()(c, a, o)));
  const r = await createEnv(p, bundle, only(linux('3.11.7', { executable: '/usr/bin/python3' })), cancelled);
  assert.ok(!r.ok && r.failure.kind === 'cancelled' && r.failure.message === 'the setup was cancelled');
  assert.equal(why({ code: null, stdout: '', stderr: '', error: new Error('timed out after 900 s') }), 'timed out after 900 s');
  assert.equal(why({ code: 2, stdout: '', stderr: '' }), 'exit code 2');
  assert.deepEqual(fs.readdirSync(p.storage), []);
});

/** The pip runs of a host, as the arguments after `-m pip install` (without the quiet options). */
const pipRuns = (host: { calls: Call[] }) =>
  host.calls
    .filter((c) => isPip(c.args))
    .map((c) => c.args.slice(c.args.indexOf('install') + 1).filter((a) => !['--no-input', '--progress-bar', 'off', '--no-compile'].includes(a) && !a.startsWith('--disable')));

test('linux-x64 .vsix, a Python its compiled wheel fits: tokenline and its dependencies from bundled/ alone', async () => {
  const p = scratch();
  const host = fakeHost(workingRunner());
  const r = await createEnv(p, linuxBundle, only(linux('3.11.7'), linuxBundle), host);
  assert.ok(r.ok);
  assert.deepEqual(pipRuns(host), [
    ['--no-index', '--no-deps', '--find-links', path.join(p.bundled, 'wheels'), 'tokenline==0.1.0'],
    ['--no-index', '--find-links', path.join(p.bundled, 'deps'), '-r', path.join(p.bundled, 'requirements.txt')],
  ]);
  assert.ok(host.lines.includes(`The bundled compiled core fits Python 3.11.7: ${COMPILED_311}.`), host.lines.join('\n'));
  assert.ok(host.lines.includes('Installing tokenline 0.1.0 and its dependencies from the wheels bundled with the extension (no network).'));
});

test('no compiled wheel fits, a C compiler is there: the core is compiled from the sdist (offline where deps.json says so)', async () => {
  const p = scratch();
  const host = fakeHost(workingRunner());
  const r = await createEnv(p, linuxBundle, only(linux('3.14.0'), linuxBundle), host);
  assert.ok(r.ok);
  const deps = path.join(p.bundled, 'deps');
  assert.deepEqual(pipRuns(host), [
    ['--no-deps', '--no-cache-dir', '--no-index', '--find-links', deps, path.join(p.bundled, 'sdist', 'tokenline-0.1.0.tar.gz')],
    ['--no-index', '--find-links', deps, '-r', path.join(p.bundled, 'requirements.txt')],
  ]);
  assert.ok(host.progressed.includes('compiling the core for Python 3.14 (a few minutes)…'), host.progressed.join('\n'));
  const said = host.lines.join('\n');
  assert.match(said, /Compiling the core: no bundled compiled core fits Python 3\.14\.0 on linux-x86_64 \(they are for CPython 3\.11 on linux_x86_64\): compiling it from the bundled source distribution with \/usr\/bin\/gcc\./);
  assert.match(said, /The core is compiled for Python 3\.14\.0\./);

  // A Python whose build requirements the .vsix does not carry builds with the index's.
  const q = scratch();
  const online = fakeHost(workingRunner());
  const noBuild = { ...linuxBundle, offline: { pythons: ['3.14'], build: [] } };
  assert.ok((await createEnv(q, noBuild, only(linux('3.14.0'), noBuild), online)).ok);
  assert.deepEqual(pipRuns(online)[0], ['--no-deps', '--no-cache-dir', path.join(q.bundled, 'sdist', 'tokenline-0.1.0.tar.gz')]);
});

test('the compile fails: the log says why and the pure-Python core is installed instead', async () => {
  const p = scratch();
  const compileError = 'error: command \'/usr/bin/gcc\' failed with exit code 1\nERROR: Failed building wheel for tokenline\n';
  const host = fakeHost((c, a, o) => (a.some((x) => x.endsWith('.tar.gz')) ? { code: 1, stderr: compileError } : workingRunner()(c, a, o)));
  const r = await createEnv(p, linuxBundle, only(linux('3.14.0'), linuxBundle), host);
  assert.ok(r.ok);
  const runs = pipRuns(host);
  assert.equal(runs.length, 3, 'the compile, then the wheels (pip takes the pure one) and the dependencies');
  assert.deepEqual(runs[1], ['--no-index', '--no-deps', '--find-links', path.join(p.bundled, 'wheels'), 'tokenline==0.1.0']);
  assert.ok(
    host.lines.includes(
      'WARN Compiling the core failed (pip install failed (exit code 1: ERROR: Failed building wheel for tokenline)); the server runs the pure-Python core instead (edits about 20× slower).',
    ),
    host.lines.join('\n'),
  );
});

test('no C compiler: the pure-Python core, and the log says why and what it costs', async () => {
  const p = scratch();
  const host = fakeHost(workingRunner());
  const r = await createEnv(p, linuxBundle, only(linux('3.14.0', { compiler: '' }), linuxBundle), host);
  assert.ok(r.ok);
  assert.equal(pipRuns(host).length, 2);
  assert.ok(!pipRuns(host).some((a) => a.some((x) => x.endsWith('.tar.gz'))), 'nothing compiled');
  const warning = host.lines.find((l) => l.startsWith('WARN The server runs the pure-Python core: no bundled compiled core fits Python 3.14.0'));
  assert.ok(warning?.includes('no C compiler was found to compile it'), host.lines.join('\n'));
  assert.ok(warning?.endsWith('the server runs the pure-Python core (edits about 20× slower).'), warning);
});

test('pip runs in the environment the host gives (VS Code\'s proxy)', async () => {
  const host = fakeHost(workingRunner());
  const envs: (NodeJS.ProcessEnv | undefined)[] = [];
  const run = host.run;
  host.run = (c, a, o) => {
    if (isPip(a)) {
      envs.push(o.env);
    }
    return run(c, a, o);
  };
  host.env = { PIP_PROXY: 'http://proxy:3128' };
  assert.ok((await createEnv(scratch(), linuxBundle, only(linux('3.14.0'), linuxBundle), host)).ok);
  assert.equal(envs.length, 2);
  assert.ok(envs.every((e) => e?.PIP_PROXY === 'http://proxy:3128'));
});

test('with pip\'s wheel bundled: the environment is made without pip and pip runs from the wheel, without byte-compiling', async () => {
  const p = scratch();
  const host = fakeHost(workingRunner());
  const withPip = { ...linuxBundle, pip: 'pip-26.3-py3-none-any.whl' };
  assert.ok((await createEnv(p, withPip, only(linux('3.11.7'), withPip), host)).ok);
  const [venv, ...pips] = host.calls;
  assert.deepEqual(venv.args.slice(0, 3), ['-m', 'venv', '--without-pip']);
  const wheel = path.join(p.bundled, 'pip', 'pip-26.3-py3-none-any.whl', 'pip');
  assert.equal(pips.length, 2);
  for (const c of pips) {
    assert.equal(c.command, path.join(venv.args[3], 'bin', 'python'));
    assert.deepEqual(c.args.slice(0, 2), [wheel, 'install']);
    assert.ok(c.args.includes('--no-compile'));
  }
});
