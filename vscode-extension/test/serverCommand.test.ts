import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartPolicy } from '../src/restartPolicy';
import { BundledPlan, expandVariables, importCheckArgs, Launch, resolveLaunch } from '../src/serverCommand';

function launch(l: Launch | BundledPlan): Launch {
  assert.ok(!('candidates' in l), 'a command, not the bundled server');
  return l;
}

function bundled(l: Launch | BundledPlan): BundledPlan {
  assert.ok('candidates' in l, 'the bundled server');
  return l;
}

const base = { serverCommand: [], python: '', platform: 'linux', home: '/home/me', workspaceFolder: '/w' };

test('tokenline.server.command wins over everything', () => {
  const l = launch(resolveLaunch({ ...base, serverCommand: ['~/bin/tokenline', 'serve', '--log', '${workspaceFolder}/tl.log'], python: '/usr/bin/python3', pythonFromExtension: '/venv/bin/python' }));
  assert.equal(l.command, '/home/me/bin/tokenline');
  assert.deepEqual(l.args, ['serve', '--log', '/w/tl.log']);
  assert.equal(l.source, 'setting');
  assert.equal(l.python, undefined, 'no import check for an explicit command');
});

test('tokenline.python comes before the Python extension', () => {
  const l = launch(resolveLaunch({ ...base, python: '${workspaceFolder}/.venv/bin/python', pythonFromExtension: '/venv/bin/python' }));
  assert.deepEqual([l.command, ...l.args], ['/w/.venv/bin/python', '-m', 'tokenline', 'serve']);
  assert.equal(l.source, 'python-setting');
  assert.equal(l.python, '/w/.venv/bin/python');
});

test("no setting: the bundled server, made with the Python extension's interpreter, then PATH", () => {
  const ext = bundled(resolveLaunch({ ...base, pythonFromExtension: '/venv/bin/python' }));
  assert.equal(ext.fromPythonExtension, true);
  assert.deepEqual(ext.candidates[0], { command: '/venv/bin/python', from: "the Python extension's interpreter" });
  assert.deepEqual(
    ext.candidates.slice(1).map((c) => c.command),
    ['python3', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10', 'python'],
  );
  const def = bundled(resolveLaunch(base));
  assert.equal(def.fromPythonExtension, false);
  assert.equal(def.candidates[0].command, 'python3');
  const win = bundled(resolveLaunch({ ...base, platform: 'win32' }));
  assert.deepEqual(win.candidates.map((c) => [c.command, ...(c.args ?? [])]), [['python'], ['py', '-3']]);
});

test('variables and ~ expand only where they stand', () => {
  assert.equal(expandVariables('~', '/h'), '/h');
  assert.equal(expandVariables('~user/x', '/h'), '~user/x');
  assert.equal(expandVariables('${userHome}/py', '/h'), '/h/py');
  assert.equal(expandVariables('${workspaceFolder}/py', '/h', undefined), '${workspaceFolder}/py');
});

test('the import check asks for the tokenline package', () => {
  assert.deepEqual(importCheckArgs(), ['-c', 'import tokenline']);
});

test('a crashing server is restarted a few times, then not again', () => {
  const p = new RestartPolicy(3, 180_000);
  assert.equal(p.shouldRestart(0), true);
  assert.equal(p.shouldRestart(1000), true);
  assert.equal(p.shouldRestart(2000), true);
  assert.equal(p.shouldRestart(3000), false);
  assert.equal(p.shouldRestart(4000), false);
  // crashes older than the window are forgotten
  assert.equal(p.shouldRestart(200_000), true);
  p.reset();
  assert.equal(p.recentCrashes, 0);
});
