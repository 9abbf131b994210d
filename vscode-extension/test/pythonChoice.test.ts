// Finding the Pythons on this machine and choosing the one the bundled server's environment is
// made with: a fake runner answers the probe as each interpreter would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunOptions, RunResult } from '../src/process';
import {
  BasePython,
  Carried,
  choosePython,
  describeWheels,
  findPythons,
  fittingWheel,
  parseProbe,
  pathCandidates,
  PROBE,
  supported,
} from '../src/pythonChoice';

const ok = (stdout = ''): Partial<RunResult> => ({ code: 0, stdout });
const enoent = (): Partial<RunResult> => ({ code: null, error: Object.assign(new Error('spawn ENOENT'), { code: 'ENOENT' }) });
const isProbe = (args: readonly string[]) => args.includes(PROBE);
/** What PROBE prints for a CPython on Linux x86_64 with gcc and its headers. */
const probe = (version: string, exe: string, more = 'cpython\nlinux-x86_64\n0\n/usr/bin/gcc\n1'): Partial<RunResult> =>
  ok(`${version}\n${exe}\n${more}\n`);

function runner(answer: (command: string, args: readonly string[]) => Partial<RunResult> | undefined) {
  return async (command: string, args: readonly string[], _o: RunOptions): Promise<RunResult> => ({
    code: null,
    stdout: '',
    stderr: '',
    ...(answer(command, args) ?? enoent()),
  });
}

const WHEELS = [
  'tokenline-0.1.0-cp310-cp310-linux_x86_64.whl',
  'tokenline-0.1.0-cp311-cp311-linux_x86_64.whl',
  'tokenline-0.1.0-cp312-cp312-linux_x86_64.whl',
  'tokenline-0.1.0-cp313-cp313-linux_x86_64.whl',
  'tokenline-0.1.0-py3-none-any.whl',
];
const universal: Carried = { wheels: WHEELS, sdist: 'tokenline-0.1.0.tar.gz' };
const linuxX64: Carried = { ...universal, offline: { pythons: ['3.10', '3.11', '3.12', '3.13', '3.14'], build: ['3.14'] } };
const py = (version: string, from: string, more: Partial<BasePython> = {}): BasePython => ({
  executable: `/usr/bin/python${version.slice(0, 4)}`,
  version,
  from,
  implementation: 'cpython',
  platform: 'linux-x86_64',
  freeThreaded: false,
  compiler: '/usr/bin/gcc',
  headers: true,
  ...more,
});

test('Python 3.10 or newer', () => {
  assert.equal(supported('3.10.0'), true);
  assert.equal(supported('3.13.1'), true);
  assert.equal(supported('4.0.0'), true);
  assert.equal(supported('3.9.18'), false);
  assert.equal(supported('2.7.18'), false);
});

test('no Python at all: the message names each interpreter looked for', async () => {
  const r = await findPythons(pathCandidates('linux'), runner(() => undefined));
  assert.equal(r, 'not found: python3, python3.14, python3.13, python3.12, python3.11, python3.10, python');
});

test('every Python 3.10+ is found once, in the candidates\' order; old ones are passed over', async () => {
  const found = await findPythons(
    pathCandidates('linux'),
    runner((c, a) => {
      if (!isProbe(a)) {
        return undefined;
      }
      // python3 is 3.8; python3.12 and python are one interpreter.
      return { python3: probe('3.8.10', '/usr/bin/python3.8'), 'python3.12': probe('3.12.3', '/usr/bin/python3.12'), 'python3.11': probe('3.11.2', '/usr/bin/python3.11'), python: probe('3.12.3', '/usr/bin/python3.12') }[c];
    }),
  );
  assert.ok(Array.isArray(found));
  assert.deepEqual(
    found.map((p) => [p.executable, p.version, p.from]),
    [
      ['/usr/bin/python3.12', '3.12.3', 'python3.12 on PATH'],
      ['/usr/bin/python3.11', '3.11.2', 'python3.11 on PATH'],
    ],
  );
  assert.deepEqual(found[0], { executable: '/usr/bin/python3.12', version: '3.12.3', from: 'python3.12 on PATH', implementation: 'cpython', platform: 'linux-x86_64', freeThreaded: false, compiler: '/usr/bin/gcc', headers: true });
});

test('only old or broken Pythons: each is named once with its version or its error', async () => {
  const old = (c: string, a: readonly string[]) => (isProbe(a) && (c === 'python3' || c === 'python') ? probe('3.8.10', '/usr/bin/python3.8') : undefined);
  assert.equal(
    await findPythons(pathCandidates('linux'), runner(old)),
    'python3 on PATH is Python 3.8.10 (/usr/bin/python3.8); not found: python3.14, python3.13, python3.12, python3.11, python3.10',
  );
  // Python 2 stops half-way through the probe (no sys.implementation), after its version.
  const two = runner(() => ({ code: 1, stdout: '2.7.18\n/usr/bin/python2.7\n', stderr: "AttributeError: 'module' object has no attribute 'implementation'\n" }));
  assert.equal(await findPythons([{ command: 'python', from: 'python on PATH' }], two), 'python on PATH is Python 2.7.18 (/usr/bin/python2.7)');
  const broken = await findPythons(
    [{ command: '/opt/py/bin/python', from: "the Python extension's interpreter" }],
    runner(() => ({ code: 1, stderr: 'Fatal Python error: init_fs_encoding\n' })),
  );
  assert.equal(broken, "the Python extension's interpreter does not run (exit code 1: Fatal Python error: init_fs_encoding)");
});

test('Python 3.10 or newer', () => {
  assert.equal(supported('3.10.0'), true);
  assert.equal(supported('3.13.1'), true);
  assert.equal(supported('4.0.0'), true);
  assert.equal(supported('3.9.18'), false);
  assert.equal(supported('2.7.18'), false);
});

test('the probe of a Python older than this extension (two lines) still gives its version', () => {
  assert.deepEqual(parseProbe('3.8.10\n/usr/bin/python3.8\n', 'python3 on PATH'), { executable: '/usr/bin/python3.8', version: '3.8.10', from: 'python3 on PATH' });
  assert.equal(parseProbe('', 'x'), undefined);
});

test('a compiled wheel fits CPython of its minor version on its platform, not free-threaded builds or others', () => {
  assert.equal(fittingWheel(py('3.12.3', 'x'), WHEELS), 'tokenline-0.1.0-cp312-cp312-linux_x86_64.whl');
  assert.equal(fittingWheel(py('3.14.0', 'x'), WHEELS), undefined);
  assert.equal(fittingWheel(py('3.13.1', 'x', { freeThreaded: true }), WHEELS), undefined);
  assert.equal(fittingWheel(py('3.12.3', 'x', { platform: 'macosx-11.0-arm64' }), WHEELS), undefined);
  assert.equal(fittingWheel(py('3.12.3', 'x', { implementation: 'pypy' }), WHEELS), undefined);
  assert.equal(fittingWheel(py('3.12.3', 'x', { platform: undefined }), WHEELS), undefined);
  assert.equal(describeWheels(WHEELS), 'CPython 3.10, 3.11, 3.12, 3.13 on linux_x86_64');
});

test('a Python the compiled wheel fits wins over the Python extension\'s interpreter that none fits', () => {
  const ext = py('3.14.0', "the Python extension's interpreter");
  const onPath = py('3.12.3', 'python3.12 on PATH');
  const c = choosePython([ext, onPath], universal);
  assert.equal(c.python, onPath);
  assert.deepEqual(c.core, { kind: 'wheel', wheel: 'tokenline-0.1.0-cp312-cp312-linux_x86_64.whl' });
  assert.equal(c.offline, false, 'the universal .vsix carries no dependencies');
  // Two that fit: the first candidate (the Python extension's) is taken.
  assert.equal(choosePython([py('3.11.2', 'a'), onPath], universal).python.version, '3.11.2');
  assert.equal(choosePython([onPath], linuxX64).offline, true);
});

test('none fits: the one whose dependencies the .vsix carries, then one that can compile', () => {
  const newer = py('3.15.0', 'python3 on PATH');
  const carried = py('3.14.0', 'python3.14 on PATH');
  const c = choosePython([newer, carried], linuxX64);
  assert.equal(c.python, carried);
  assert.equal(c.offline, true);
  assert.equal(c.core.kind, 'compile');
  assert.equal(
    c.core.kind === 'compile' && c.core.reason,
    'no bundled compiled core fits Python 3.14.0 on linux-x86_64 (they are for CPython 3.10, 3.11, 3.12, 3.13 on linux_x86_64): compiling it from the bundled source distribution with /usr/bin/gcc',
  );
  const noHeaders = py('3.14.0', 'a', { headers: false });
  const c2 = choosePython([noHeaders, newer], universal);
  assert.equal(c2.python, newer, 'a Python that can compile before one that cannot');
});

test('nothing to compile with: the pure-Python core, the reason naming what is missing and the cost', () => {
  const cases: [BasePython, Carried, string][] = [
    [py('3.14.0', 'a', { compiler: '' }), universal, 'no C compiler was found to compile it (cc, gcc or clang; Visual Studio Build Tools on Windows)'],
    [py('3.14.0', 'a', { headers: false }), universal, 'Python.h of Python 3.14 is missing (on Debian and Ubuntu: python3.14-dev)'],
    [py('3.14.0', 'a'), { wheels: WHEELS }, 'this build of the extension carries no source distribution'],
  ];
  for (const [p, carried, missing] of cases) {
    const c = choosePython([p], carried);
    assert.equal(c.core.kind, 'pure');
    assert.ok(c.core.kind === 'pure' && c.core.reason.includes(`, and ${missing}: the server runs the pure-Python core (edits about 20× slower)`), JSON.stringify(c.core));
  }
  const ft = choosePython([py('3.13.1', 'a', { freeThreaded: true, compiler: '' })], linuxX64);
  assert.ok(ft.core.kind === 'pure' && ft.core.reason.startsWith('no bundled compiled core fits Python 3.13.1 (free-threaded) on linux-x86_64'));
  assert.equal(ft.offline, false, 'the bundled cp313 dependencies do not fit a free-threaded 3.13');
});
