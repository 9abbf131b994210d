// The language client's output, each line at the level it names in the Tokenline log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, Level, ServerOutput } from '../src/serverLog';

test("the server's logging lines keep their level, without the timestamp", () => {
  assert.deepEqual(classify('2026-11-24 08:00:00,123 ERROR tokenline.server: cannot load model x', 'info'), {
    level: 'error',
    text: 'tokenline.server: cannot load model x',
  });
  assert.equal(classify('2026-11-24 08:00:00,123 WARNING tokenline.server: slow', 'info').level, 'warn');
  assert.equal(classify('2026-11-24 08:00:00,123 CRITICAL x: y', 'info').level, 'error');
  assert.equal(classify('2026-11-24 08:00:00,123 DEBUG x: y', 'info').level, 'debug');
  assert.equal(classify('INFO x: y', 'error').level, 'info');
  // A traceback's lines continue the line before.
  assert.deepEqual(classify('  File "server/app.py", line 3, in run', 'error'), { level: 'error', text: '  File "server/app.py", line 3, in run' });
});

test("the client's lines keep theirs; an exit with code 0, or while the extension stops the server, is no error", () => {
  assert.deepEqual(classify('[Error - 8:00:00 AM] Server process exited with code 0.', 'info'), {
    level: 'info',
    text: 'Server process exited with code 0.',
  });
  assert.equal(classify('[Error - 08:00:00] Server process exited with code 1.', 'info').level, 'error');
  assert.equal(classify('[Error - 08:00:00] Server process exited with signal SIGTERM.', 'info').level, 'error');
  assert.equal(classify('[Error - 08:00:00] Server process exited with signal SIGTERM.', 'info', true).level, 'info');
  assert.equal(classify('[Warn  - 08:00:00] x', 'info').level, 'warn');
  assert.equal(classify('[Trace - 08:00:00] Sending request', 'error').level, 'info');
});

test('ServerOutput writes whole lines at their levels, also when stderr comes in pieces', () => {
  const seen: [Level, string][] = [];
  const at = (level: Level) => (m: string) => seen.push([level, m]);
  const log = { name: 'Tokenline', trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const out = new ServerOutput(log as never);
  out.append('2026-11-24 08:00:00,123 ERROR tokenline.server: model fai');
  out.append('led\nTraceback (most recent call last):\n  File "x"');
  out.appendLine('[Error - 08:00:01] Server process exited with code 0.');
  out.append('[LSP   - 08:00:02] ');
  out.appendLine('{"jsonrpc":"2.0"}');
  assert.deepEqual(seen, [
    ['error', 'tokenline.server: model failed'],
    ['error', 'Traceback (most recent call last):'],
    ['error', '  File "x"'],
    ['info', 'Server process exited with code 0.'],
    ['info', '{"jsonrpc":"2.0"}'],
  ]);
});
