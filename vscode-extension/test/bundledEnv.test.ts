// The bundled server's environment: finding a Python, creating, reusing and failing, with a fake
// process runner and a real scratch folder as the extension's global storage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  Bundle,
  createEnv,
  EnvHost,
  EnvPaths,
  envDir,
  findPython,
  installArgs,
  manualCommand,
  pathCandidates,
  readBundle,
  readyEnv,
  supported,
  why,
} from '../src/bundledEnv';
import type { RunOptions, RunResult } from '../src/process';

const bundle: Bundle = { version: '0.1.0', id: 'abc123def456', wheels: ['tokenline-0.1.0-py3-none-any.whl'] };

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

const probe = (version: string, exe: string): Partial<RunResult> => ok(`${version}\n${exe}\n`);
const isProbe = (args: readonly string[]) => args.some((a) => a.includes('sys.version_info'));
const isVersionCheck = (args: readonly string[]) => args.some((a) => a.includes('importlib.metadata'));

/** venv makes <dir>/bin/python; pip succeeds; the version check answers `installed`. */
function workingRunner(installed = bundle.version): Answer {
  return (command, args) => {
    if (isProbe(args)) {
      return command === 'python3' ? probe('3.11.7', '/usr/bin/python3.11') : undefined;
    }
    if (args[0] === '-m' && args[1] === 'venv') {
      fs.mkdirSync(path.join(args[2], 'bin'), { recursive: true });
      fs.writeFileSync(path.join(args[2], 'bin', 'python'), '');
      return ok();
    }
    if (args[1] === 'pip') {
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
});

test('tokenline comes only from the bundled wheels; its dependencies from the index', () => {
  const [own, deps] = installArgs('/ext/bundled', '0.1.0');
  assert.deepEqual(own, ['-m', 'pip', 'install', '--no-index', '--no-deps', '--find-links', '/ext/bundled/wheels', 'tokenline==0.1.0']);
  assert.deepEqual(deps, ['-m', 'pip', 'install', '-r', '/ext/bundled/requirements.txt']);
});

test('the command to run by hand makes the environment the extension looks for', () => {
  const p: EnvPaths = { storage: '/home/me/.vscode/globalStorage/tokenline.tokenline', bundled: '/ext/bundled', platform: 'linux' };
  assert.equal(
    manualCommand('/usr/bin/python3', envDir(p, bundle), p, bundle),
    'cd /home/me/.vscode/globalStorage/tokenline.tokenline && /usr/bin/python3 -m venv env-0.1.0-abc123def456' +
      ' && env-0.1.0-abc123def456/bin/python -m pip install --no-index --no-deps --find-links /ext/bundled/wheels tokenline==0.1.0' +
      ' && env-0.1.0-abc123def456/bin/python -m pip install -r /ext/bundled/requirements.txt',
  );
  const spaced = { ...p, storage: '/home/me/My Storage' };
  assert.ok(manualCommand('/usr/bin/python3', envDir(spaced, bundle), spaced, bundle).startsWith("cd '/home/me/My Storage' && "));
});

test('Python 3.10 or newer', () => {
  assert.equal(supported('3.10.0'), true);
  assert.equal(supported('3.13.1'), true);
  assert.equal(supported('4.0.0'), true);
  assert.equal(supported('3.9.18'), false);
  assert.equal(supported('2.7.18'), false);
});

test('no Python at all: the message names each interpreter looked for', async () => {
  const host = fakeHost(() => undefined);
  const r = await findPython(pathCandidates('linux'), host);
  assert.equal(typeof r, 'string');
  assert.equal(r, 'not found: python3, python3.14, python3.13, python3.12, python3.11, python3.10, python');
});

test('an old python3 is passed over for a newer python3.x; only old ones: their versions are named', async () => {
  const old = (command: string, args: readonly string[]) =>
    isProbe(args) && command === 'python3' ? probe('3.8.10', '/usr/bin/python3.8') : undefined;
  const found = await findPython(
    pathCandidates('linux'),
    fakeHost((c, a) => old(c, a) ?? (isProbe(a) && c === 'python3.12' ? probe('3.12.3', '/usr/bin/python3.12') : undefined)),
  );
  assert.deepEqual(found, { executable: '/usr/bin/python3.12', version: '3.12.3' });

  // python is the same 3.8 as python3: named once.
  const none = await findPython(
    pathCandidates('linux'),
    fakeHost((c, a) => old(c, a) ?? (isProbe(a) && c === 'python' ? probe('3.8.10', '/usr/bin/python3.8') : undefined)),
  );
  assert.equal(
    none,
    'python3 on PATH is Python 3.8.10 (/usr/bin/python3.8); not found: python3.14, python3.13, python3.12, python3.11, python3.10',
  );
  const broken = await findPython(
    [{ command: '/opt/py/bin/python', from: "the Python extension's interpreter" }],
    fakeHost(() => ({ code: 1, stderr: 'Fatal Python error: init_fs_encoding\n' })),
  );
  assert.equal(broken, "the Python extension's interpreter does not run (exit code 1: Fatal Python error: init_fs_encoding)");
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
  const base = await findPython(pathCandidates('linux'), first);
  assert.ok(typeof base !== 'string');
  const r = await createEnv(p, bundle, base, first);
  const dir = envDir(p, bundle);
  assert.deepEqual(r, { ok: true, python: path.join(dir, 'bin', 'python'), created: true });
  const steps = first.calls.filter((c) => !isProbe(c.args)).map((c) => [c.command, ...c.args.slice(0, 3)]);
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
  const r = await createEnv(p, bundle, { executable: '/usr/bin/python3.11', version: '3.11.2' }, host);
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
    a[1] === 'pip' && !a.includes('--no-index') ? { code: 1, stderr: pipError } : workingRunner()(c, a, o),
  );
  const r = await createEnv(p, bundle, { executable: '/usr/bin/python3', version: '3.11.7' }, host);
  assert.ok(!r.ok && r.failure.kind === 'install');
  if (!r.ok && r.failure.kind === 'install') {
    assert.equal(
      r.failure.message,
      'pip install failed (exit code 1: ERROR: Could not find a version that satisfies the requirement sentencepiece>=0.2.0 (from tokenline) (from versions: none))',
    );
    assert.equal(r.failure.command, manualCommand('/usr/bin/python3', envDir(p, bundle), p, bundle));
  }
  // The extension's own runs keep pip quiet and non-interactive.
  const pips = host.calls.filter((c) => c.args[1] === 'pip');
  assert.equal(pips.length, 2);
  assert.ok(pips.every((c) => c.args.includes('--no-input') && c.args.includes('--disable-pip-version-check')));
  assert.deepEqual(fs.readdirSync(p.storage), []);
});

test('a cancelled or timed-out install says so', async () => {
  const p = scratch();
  const cancelled = fakeHost((c, a, o) => (a[1] === 'pip' ? { code: null, error: new Error('cancelled') } : workingRunner()(c, a, o)));
  const r = await createEnv(p, bundle, { executable: '/usr/bin/python3', version: '3.11.7' }, cancelled);
  assert.ok(!r.ok && r.failure.kind === 'cancelled' && r.failure.message === 'the setup was cancelled');
  assert.equal(why({ code: null, stdout: '', stderr: '', error: new Error('timed out after 900 s') }), 'timed out after 900 s');
  assert.equal(why({ code: 2, stdout: '', stderr: '' }), 'exit code 2');
  assert.deepEqual(fs.readdirSync(p.storage), []);
});
