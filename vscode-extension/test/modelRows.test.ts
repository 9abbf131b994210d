import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelRows, pickerPlaceholder } from '../src/modelRows';
import type { ModelInfo, Status } from '../src/protocol';

const models: ModelInfo[] = [
  { label: 'mistral-7b-v0.1', value: 'mistral-7b-v0.1', description: 'bundled, the default', kind: 'bundled', inUse: true },
  { label: 'o200k_base', value: 'o200k_base', description: 'downloaded by tiktoken on first use', kind: 'tiktoken', download: true },
  { label: 'cl100k_base', value: 'cl100k_base', description: 'cached in /tmp/c', kind: 'tiktoken' },
  { label: 'tok/tokenizer.json', value: 'tok/tokenizer.json', description: 'tokenizer.json', kind: 'workspace' },
  { label: 'acme/tiny', value: 'acme/tiny', description: 'Hugging Face cache: /h/x', kind: 'huggingface' },
];

const status: Status = {
  uri: 'file:///w/prompt.md',
  version: 3,
  tokens: 12,
  contextWindow: 8192,
  model: 'mistral-7b-v0.1',
  compiled: true,
};

test('one heading per kind, in the order the server lists them', () => {
  const rows = modelRows(models);
  assert.deepEqual(
    rows.filter((r) => r.heading !== undefined).map((r) => r.heading),
    ['Bundled', 'tiktoken encodings', 'Tokenizer files in the workspace', 'Hugging Face cache'],
  );
  assert.deepEqual(
    rows.map((r) => r.value ?? `# ${r.label}`),
    ['# Bundled', 'mistral-7b-v0.1', '# tiktoken encodings', 'o200k_base', 'cl100k_base', '# Tokenizer files in the workspace', 'tok/tokenizer.json', '# Hugging Face cache', 'acme/tiny'],
  );
});

test('the model in use is checked, whatever the setting says', () => {
  const rows = modelRows(models, status);
  assert.deepEqual(rows.filter((r) => r.inUse).map((r) => r.label), ['$(check) mistral-7b-v0.1']);
  assert.equal(rows.find((r) => r.value === 'o200k_base')?.label, 'o200k_base');
  const o200kInUse = models.map((m) => ({ ...m, inUse: m.value === 'o200k_base' }));
  assert.deepEqual(modelRows(o200kInUse).filter((r) => r.inUse).map((r) => r.value), ['o200k_base']);
});

test('encodings still to download are marked, cached ones described by their folder', () => {
  const rows = modelRows(models, status);
  assert.equal(rows.find((r) => r.value === 'o200k_base')?.description, '$(cloud-download) downloaded by tiktoken on first use');
  assert.equal(rows.find((r) => r.value === 'cl100k_base')?.description, 'cached in /tmp/c');
});

test('the model that failed to load says so, and the placeholder names the model in use', () => {
  const failed: Status = { ...status, requestedModel: 'o200k_base', modelError: 'not in the cache' };
  const rows = modelRows(models, failed);
  assert.equal(rows.find((r) => r.value === 'o200k_base')?.description, '$(warning) could not be loaded; choose it to try again');
  assert.equal(pickerPlaceholder('o200k_base', failed), 'In use: mistral-7b-v0.1 (o200k_base could not be loaded)');
  assert.equal(pickerPlaceholder('o200k_base', { ...status, model: 'o200k_base' }), 'In use: o200k_base');
  assert.equal(pickerPlaceholder('o200k_base'), 'Setting: o200k_base');
  assert.equal(pickerPlaceholder(''), 'Setting: the bundled default');
});
