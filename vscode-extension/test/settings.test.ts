import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ConfigView,
  explicitServerSettings,
  Inspected,
  normalizeContextWindow,
  normalizeWarnAt,
  parseContextWindow,
  readSettings,
  RESTART_KEYS,
  SERVER_KEYS,
  serverSettings,
  splitCommandLine,
} from '../src/settings';

const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const declared: Record<string, { default: unknown }> = pkg.contributes.configuration.properties;

/** A ConfigView over package.json's defaults plus overrides, recording the keys read. */
function view(overrides: Record<string, unknown> = {}, read?: Set<string>): ConfigView {
  return {
    get<T>(key: string): T | undefined {
      read?.add(key);
      if (key in overrides) {
        return overrides[key] as T;
      }
      return declared[`tokenline.${key}`]?.default as T | undefined;
    },
  };
}

test('every setting the extension reads is declared in package.json, and every declared one is read', () => {
  const read = new Set<string>();
  readSettings(view({}, read));
  const declaredKeys = Object.keys(declared).map((k) => k.replace(/^tokenline\./, ''));
  // trace.server is read by vscode-languageclient itself (client id "tokenline").
  assert.deepEqual([...read, 'trace.server'].sort(), declaredKeys.sort());
  for (const k of [...SERVER_KEYS, ...RESTART_KEYS]) {
    assert.ok(declaredKeys.includes(k), `${k} is declared`);
  }
});

test('package.json defaults give the server its documented defaults', () => {
  const s = readSettings(view());
  assert.deepEqual(serverSettings(s), {
    model: '',
    contextWindow: 8192,
    warnAt: 0.9,
    sectionCounts: true,
    compareModels: [],
    contextWindows: {},
  });
  assert.equal(s.python, '');
  assert.deepEqual(s.serverCommand, []);
  assert.equal(s.boundariesEnabled, true);
  assert.deepEqual(s.languages, [
    'markdown',
    'plaintext',
    'prompt',
    '**/*.prompt',
    '**/*.prompty',
    '**/*.prompt.md',
    'jsonl',
    '**/*.jsonl',
    '**/*.prompt.yml',
    '**/*.prompt.yaml',
  ]);
});

test('every setting has a description and a scope', () => {
  for (const [key, d] of Object.entries(declared) as [string, Record<string, unknown>][]) {
    assert.ok(d.markdownDescription || d.description, `${key} has a description`);
    assert.ok(d.scope, `${key} has a scope`);
  }
  assert.deepEqual((declared['tokenline.trace.server'] as unknown as { enum: string[] }).enum, ['off', 'messages', 'verbose']);
});

test('ill-typed values fall back to the defaults', () => {
  const s = readSettings(view({ contextWindow: -5, warnAt: 3, sectionCounts: 'yes', model: 42, languages: 'markdown' }));
  assert.equal(s.contextWindow, 8192);
  assert.equal(s.warnAt, 0.9);
  assert.equal(s.sectionCounts, true);
  assert.equal(s.model, '');
  assert.deepEqual(s.languages, ['markdown']);
  assert.equal(normalizeContextWindow(1.5), 8192);
  assert.equal(normalizeContextWindow('32,768'), 32768);
  assert.equal(normalizeWarnAt(0), 0);
  assert.equal(normalizeWarnAt(Number.NaN), 0.9);
});

test('user values are passed through, trimmed', () => {
  const s = readSettings(
    view({
      model: '  mistralai/Mistral-7B-v0.1 ',
      contextWindow: 32768,
      warnAt: 0.5,
      sectionCounts: false,
      compareModels: [' o200k_base ', '', 'gpt-4o', 3],
      contextWindows: { o200k_base: 128000, bad: -1, worse: 'lots' },
      'server.command': ['tokenline', ' serve ', ''],
    }),
  );
  assert.deepEqual(serverSettings(s), {
    model: 'mistralai/Mistral-7B-v0.1',
    contextWindow: 32768,
    warnAt: 0.5,
    sectionCounts: false,
    compareModels: ['o200k_base', 'gpt-4o'],
    contextWindows: { o200k_base: 128000 },
  });
  assert.deepEqual(s.serverCommand, ['tokenline', 'serve']);
});

test('a server command written as one string is split like a shell would', () => {
  assert.deepEqual(splitCommandLine('tokenline serve'), ['tokenline', 'serve']);
  assert.deepEqual(splitCommandLine(`  "/opt/my tools/tokenline"  serve --tcp ''  `), ['/opt/my tools/tokenline', 'serve', '--tcp', '']);
  assert.deepEqual(splitCommandLine(`a'b c'd`), ['ab cd']);
  assert.deepEqual(splitCommandLine('   '), []);
  assert.deepEqual(readSettings(view({ 'server.command': 'python -m tokenline serve' })).serverCommand, ['python', '-m', 'tokenline', 'serve']);
});

test('context windows typed by a person', () => {
  assert.equal(parseContextWindow('128000'), 128000);
  assert.equal(parseContextWindow(' 131,072 '), 131072);
  assert.equal(parseContextWindow('200_000'), 200000);
  assert.equal(parseContextWindow('0'), undefined);
  assert.equal(parseContextWindow('-1'), undefined);
  assert.equal(parseContextWindow('8k'), undefined);
  assert.equal(parseContextWindow('1.5'), undefined);
  assert.equal(parseContextWindow(''), undefined);
});

test('the server is sent only what the user set, so the project configuration fills the rest', () => {
  const settings: Record<string, Inspected<unknown>> = {
    model: { defaultValue: '', globalValue: '  ' },
    contextWindow: { defaultValue: 8192, globalValue: 4096, workspaceFolderValue: 32768 },
    warnAt: { defaultValue: 0.9 },
    sectionCounts: { defaultValue: true, workspaceValue: false },
    compareModels: { defaultValue: [], globalValue: ['o200k_base'] },
    contextWindows: { defaultValue: {} },
  };
  const inspect = { inspect: <T>(key: string) => settings[key] as Inspected<T> | undefined };
  assert.deepEqual(explicitServerSettings(inspect), { contextWindow: 32768, sectionCounts: false, compareModels: ['o200k_base'] });
  settings.model = { defaultValue: '', workspaceValue: ' llama-2 ' };
  assert.deepEqual(explicitServerSettings(inspect).model, 'llama-2');
  assert.deepEqual(explicitServerSettings({ inspect: () => undefined }), {});
});
