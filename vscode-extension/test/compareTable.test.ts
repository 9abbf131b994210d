import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareItems, compareRows, compareTable, difference, escapeMarkdown, tooltipMarkdown } from '../src/compareTable';
import { budgetApplies, heldOf, limitOf, tooltipText } from '../src/format';
import type { Status } from '../src/protocol';

const status: Status = {
  uri: 'file:///w/prompt.md',
  version: 3,
  tokens: 1000,
  contextWindow: 8192,
  model: 'mistral-7b-v0.1',
  compiled: true,
  compare: [
    { model: 'o200k_base', tokens: 870, contextWindow: 128000, selection: 40 },
    { model: 'gpt-4o (o200k_base)', tokens: 870, contextWindow: null, selection: 40 },
    { model: 'my_models/x.model', tokens: null, contextWindow: null, selection: null, error: 'no such file' },
  ],
};

test('difference from the document model', () => {
  assert.equal(difference(870, 1000), '−13%');
  assert.equal(difference(1120, 1000), '+12%');
  assert.equal(difference(1001, 1000), '±0%');
  assert.equal(difference(5, 0), '');
});

test('the tooltip table: this document first, then each compare model in order', () => {
  const table = compareTable(status, 45);
  const lines = table.split('\n');
  // Cells after the first start with an em space (hovers draw no padding).
  const cells = (line: string) => line.split(' | ').map((c) => c.replace(/^\| |&emsp;| \|$/g, ''));
  assert.deepEqual(cells(lines[0]), ['Model', 'Tokens', 'vs. this', 'Window', 'Selection']);
  assert.equal(lines[1], '|:---|---:|---:|---:|---:|');
  assert.deepEqual(cells(lines[2]), ['mistral\\-7b\\-v0\\.1 *(this document)*', '1,000', '', '8,192 (12.2%)', '45']);
  assert.deepEqual(cells(lines[3]), ['o200k\\_base', '870', '−13%', '128,000 (0.6%)', '40']);
  assert.deepEqual(cells(lines[4]), ['gpt\\-4o \\(o200k\\_base\\)', '870', '−13%', '—', '40']);
  assert.deepEqual(cells(lines[5]), ['my\\_models/x\\.model', '—', '', '—', '']);
  assert.equal(lines[3], '| o200k\\_base | &emsp;870 | &emsp;−13% | &emsp;128,000 (0.6%) | &emsp;40 |');
  // A model that cannot be loaded says why, under the table.
  assert.match(table, /\n\n\$\(warning\) my\\_models\/x\\\.model: no such file$/);
  // Without a selection there is no selection column.
  assert.deepEqual(cells(compareTable(status).split('\n')[0]), ['Model', 'Tokens', 'vs. this', 'Window']);
  assert.equal(compareTable({ ...status, compare: [] }), '');
  assert.equal(compareTable({ ...status, compare: undefined }), '');
});

test('rows and quick pick items say the same counts', () => {
  const rows = compareRows(status);
  assert.deepEqual(
    rows.map((r) => [r.model, r.tokens, r.difference, r.window, r.selection]),
    [
      ['mistral-7b-v0.1', '1,000', '', '8,192 (12.2%)', ''],
      ['o200k_base', '870', '−13%', '128,000 (0.6%)', ''],
      ['gpt-4o (o200k_base)', '870', '−13%', '—', ''],
      ['my_models/x.model', '—', '', '—', ''],
    ],
  );
  const items = compareItems(
    { model: 'mistral-7b-v0.1', tokens: 1000, contextWindow: 8192, selection: 45 },
    status.compare ?? [],
    true,
  );
  assert.deepEqual(items[0], {
    label: "mistral-7b-v0.1 (this document's model)",
    description: '1,000 tokens',
    detail: 'Context window 8,192 (12.2% used) · Selection: 45 tokens',
  });
  assert.equal(items[1].description, '870 tokens · −13%');
  assert.equal(items[2].detail, 'Context window unknown · Selection: 40 tokens');
  assert.deepEqual(items[3], { label: '$(warning) my_models/x.model', description: 'not counted', detail: 'no such file' });
});

test('the markdown tooltip keeps the text line by line and the click hint last', () => {
  const text = tooltipText({ status, warnAt: 0.9 });
  const md = tooltipMarkdown(text, compareTable(status));
  const parts = md.split('\n\n');
  assert.match(parts[0], /^Tokenline: 1,000 tokens {2}\nModel: mistral\\-7b\\-v0\\.1 {2}\n/);
  assert.match(parts[1], /^\| Model \|/);
  assert.equal(parts[parts.length - 1], 'Click to choose the model and the context window\\.');
  assert.equal(escapeMarkdown('a|b_c*'), 'a\\|b\\_c\\*');
});

test('a budget of another model is held to that model tokens', () => {
  const budgeted: Status = { ...status, budget: 900, budgetPattern: 'p/*.md', budgetModel: 'o200k_base', budgetTokens: 870 };
  assert.equal(limitOf(budgeted), 900);
  assert.equal(heldOf(budgeted), 870);
  const t = tooltipText({ status: budgeted, warnAt: 0.9 });
  assert.match(t, /Budget: 900 o200k_base tokens for p\/\*\.md \(870, 96\.6% used\)/);
  assert.match(t, /At or above the warning threshold/);
  // While that model cannot be loaded, the window is the limit (as the server's diagnostics hold it).
  const failed: Status = { ...budgeted, budgetTokens: null, budgetError: 'no such file' };
  assert.equal(budgetApplies(failed), false);
  assert.equal(limitOf(failed), 8192);
  assert.equal(heldOf(failed), 1000);
  assert.match(tooltipText({ status: failed, warnAt: 0.9 }), /not counted: no such file/);
});
