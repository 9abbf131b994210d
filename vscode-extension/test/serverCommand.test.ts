import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartPolicy } from '../src/restartPolicy';
import { expandVariables, importCheckArgs, pipInstallArgs, resolveLaunch } from '../src/serverCommand';

const base = { serverCommand: [], python: '', platform: 'linux', home: '/home/me', workspaceFolder: '/w' };

test('tokenline.server.command wins over everything', () => {
  const l = resolveLaunch({ ...base, serverCommand: ['~/bin/tokenline', 'serve', '--log', '${workspaceFolder}/tl.log'], python: '/usr/bin/python3', pythonFromExtension: '/venv/bin/python' });
  assert.equal(l.command, '/home/me/bin/tokenline');
  assert.deepEqual(l.args, ['serve', '--log', '/w/tl.log']);
  assert.equal(l.source, 'setting');
  assert.equal(l.python, undefined, 'no import check for an explicit command');
});

test('tokenline.python comes before the Python extension', () => {
  const l = resolveLaunch({ ...base, python: '${workspaceFolder}/.venv/bin/python', pythonFromExtension: '/venv/bin/python' });
  assert.deepEqual([l.command, ...l.args], ['/w/.venv/bin/python', '-m', 'tokenline', 'serve']);
  assert.equal(l.source, 'python-setting');
  assert.equal(l.python, '/w/.venv/bin/python');
});

test("the Python extension's interpreter, then python3 (python on Windows)", () => {
  const ext = resolveLaunch({ ...base, pythonFromExtension: '/venv/bin/python' });
  assert.deepEqual([ext.command, ...ext.args, ext.source], ['/venv/bin/python', '-m', 'tokenline', 'serve', 'python-extension']);
  const def = resolveLaunch(base);
  assert.deepEqual([def.command, ...def.args, def.source], ['python3', '-m', 'tokenline', 'serve', 'default-python']);
  assert.equal(resolveLaunch({ ...base, platform: 'win32' }).command, 'python');
});

test('variables and ~ expand only where they stand', () => {
  assert.equal(expandVariables('~', '/h'), '/h');
  assert.equal(expandVariables('~user/x', '/h'), '~user/x');
  assert.equal(expandVariables('${userHome}/py', '/h'), '/h/py');
  assert.equal(expandVariables('${workspaceFolder}/py', '/h', undefined), '${workspaceFolder}/py');
});

test('import check and pip install target the same interpreter module', () => {
  assert.deepEqual(importCheckArgs(), ['-c', 'import tokenline']);
  assert.deepEqual(pipInstallArgs(), ['-m', 'pip', 'install', '--upgrade', 'tokenline']);
  assert.deepEqual(pipInstallArgs('/src/tokenline'), ['-m', 'pip', 'install', '--upgrade', '/src/tokenline']);
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
