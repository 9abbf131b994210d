import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  budgetLevel,
  formatCount,
  formatPercent,
  idsText,
  limitOf,
  PURE_CORE_COST,
  shellQuote,
  statusBarText,
  statusLevel,
  statusText,
  tokenAtText,
  tooltipText,
} from '../src/format';
import type { Status } from '../src/protocol';

const status: Status = {
  uri: 'file:///w/prompt.md',
  version: 3,
  tokens: 1234,
  contextWindow: 8192,
  model: 'mistral-7b-v0.1',
  compiled: true,
};

test('status bar text', () => {
  assert.equal(statusText(1234, 8192), '1,234 / 8,192 tokens');
  assert.equal(statusText(0, 8192), '0 / 8,192 tokens');
  assert.equal(statusText(1234, 8192, 56), 'Sel 56 · 1,234 / 8,192');
  assert.equal(statusText(1234567, 1048576, 0), 'Sel 0 · 1,234,567 / 1,048,576');
  assert.equal(statusText(1234, 2000, undefined, true), '1,234 / 2,000 tokens (budget)');
  assert.equal(statusText(1234, 2000, 56, true), 'Sel 56 · 1,234 / 2,000 (budget)');
  assert.equal(statusText(1234, 8192, undefined, false, true), '1,234… / 8,192 tokens');
  assert.equal(statusText(1234, 2000, 56, true, true), 'Sel 56 · 1,234… / 2,000 (budget)');
});

test('a count still catching up says so in the tooltip', () => {
  const t = tooltipText({ status: { ...status, pending: true }, warnAt: 0.9, pending: true });
  assert.match(t, /Counting the latest changes…/);
  assert.equal(statusBarText({ ...status, tokens: 1234, pending: true }), '1,234… / 8,192 tokens');
  assert.doesNotMatch(t, /Updating/);
  assert.doesNotMatch(tooltipText({ status, warnAt: 0.9 }), /Counting/);
});

test('a project budget is the limit when the server sends one', () => {
  assert.equal(limitOf(status), 8192);
  assert.equal(limitOf({ ...status, budget: 2000 }), 2000);
  const budgeted: Status = { ...status, tokens: 2345, budget: 2000, budgetPattern: 'prompts/system/*.md' };
  const t = tooltipText({ status: budgeted, warnAt: 0.9 });
  assert.match(t, /Budget: 2,000 tokens for prompts\/system\/\*\.md \(117\.2% used\)/);
  assert.match(t, /Context window: 8,192 tokens\n/);
  assert.match(t, /Over the budget by 345 tokens/);
  assert.equal(budgetLevel(1900, limitOf(budgeted), 0.9), 'warning');
  assert.doesNotMatch(tooltipText({ status, warnAt: 0.9 }), /Budget/);
});

test('counts are grouped like the server diagnostics', () => {
  assert.equal(formatCount(9301), '9,301');
  assert.equal(formatCount(7), '7');
});

test('percent of the window', () => {
  assert.equal(formatPercent(1234, 8192), '15%');
  assert.equal(formatPercent(1300, 8192), '15.8%');
  assert.equal(formatPercent(0, 8192), '0%');
  assert.equal(formatPercent(8191, 8192), '99.9%');
  assert.equal(formatPercent(8192, 8192), '100%');
  assert.equal(formatPercent(16384, 8192), '200%');
});

test('budget level matches the server diagnostics thresholds', () => {
  assert.equal(budgetLevel(100, 8192, 0.9), 'ok');
  assert.equal(budgetLevel(7372, 8192, 0.9), 'ok'); // 0.9 × 8192 = 7372.8
  assert.equal(budgetLevel(7373, 8192, 0.9), 'warning');
  assert.equal(budgetLevel(8192, 8192, 0.9), 'warning'); // exactly the window still fits
  assert.equal(budgetLevel(8193, 8192, 0.9), 'error');
  assert.equal(budgetLevel(0, 8192, 0), 'warning');
});

test('tooltip names model, window, percentage, compiled core and the selection', () => {
  const t = tooltipText({ status, warnAt: 0.9, selection: 56, selectionRanges: 2 });
  assert.match(t, /Model: mistral-7b-v0\.1/);
  assert.match(t, /Context window: 8,192 tokens \(15% used\)/);
  assert.match(t, /Selection: 56 tokens in 2 selections/);
  assert.match(t, /Compiled core: yes/);
  assert.doesNotMatch(t, /Over the window/);
  const over = tooltipText({ status: { ...status, tokens: 9301, compiled: false }, warnAt: 0.9, pending: true });
  assert.match(over, /Over the window by 1,109 tokens/);
  assert.match(over, /Compiled core: no \(pure-Python core: edits about 20× slower\)/);
  assert.match(over, /Updating/);
  assert.doesNotMatch(over, /Selection/);
  assert.match(tooltipText({ status: { ...status, tokens: 7500 }, warnAt: 0.9 }), /warning threshold \(90%\)/);
  assert.match(tooltipText({ status, warnAt: 0.9, selection: 1 }), /Selection: 1 token\n/);
});

test('a model that failed to load keeps a warning state until a status without the error', () => {
  const failed: Status = {
    ...status,
    requestedModel: 'o200k_base',
    modelError: "tiktoken could not load o200k_base: it is not in tiktoken's cache /tmp/c",
  };
  // Counts well within the window: the warning comes from the model alone.
  assert.equal(statusLevel(status, 0.9), 'ok');
  assert.equal(statusLevel(failed, 0.9), 'warning');
  assert.equal(statusBarText(failed), '$(warning) 1,234 / 8,192 tokens');
  assert.equal(statusBarText(failed, 56), '$(warning) Sel 56 · 1,234 / 8,192');
  assert.equal(statusBarText(status), '1,234 / 8,192 tokens');
  // Over the window the error colour wins; the icon still says the model is not the chosen one.
  assert.equal(statusLevel({ ...failed, tokens: 9000 }, 0.9), 'error');
  assert.equal(statusBarText({ ...failed, tokens: 9000, budget: 2000 }), '$(warning) 9,000 / 2,000 tokens (budget)');
  const t = tooltipText({ status: failed, warnAt: 0.9 });
  // The model in use, then which one failed and why.
  assert.match(t, /Model: mistral-7b-v0\.1\nWarning: o200k_base could not be loaded, so mistral-7b-v0\.1 counts instead:\ntiktoken could not load o200k_base: it is not in tiktoken's cache \/tmp\/c\n/);
  assert.match(t, /Click to choose the model again \(once it can load\) or another/);
  assert.doesNotMatch(tooltipText({ status, warnAt: 0.9 }), /Warning|again/);
});

test('token details and copied ids', () => {
  const t = { index: 0, total: 12, id: 22557, piece: '▁Hello', text: ' Hello', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } } };
  assert.equal(tokenAtText(t), 'Token 1 of 12: id 22557, piece "▁Hello", text " Hello"');
  const split = { ...t, index: 3, id: 64838, ids: [64838, 109], bytes: ['e9 ac', 'b1'], piece: '\ufffd\ufffd', text: '鬱' };
  assert.equal(tokenAtText(split), 'Tokens 4–5 of 12: ids 64838, 109, bytes e9 ac | b1, text "鬱"');
  assert.equal(idsText([[1, 2, 3]]), '[1, 2, 3]');
  assert.equal(idsText([[5], [], [6, 7]]), '[5]\n[]\n[6, 7]');
});

test('commands are logged so they can be pasted into a shell', () => {
  assert.equal(shellQuote(['/usr/bin/python3', '-m', 'tokenline', 'serve']), '/usr/bin/python3 -m tokenline serve');
  assert.equal(shellQuote(['/opt/my env/python', '-c', 'import tokenline']), "'/opt/my env/python' -c 'import tokenline'");
  assert.equal(shellQuote(["it's"]), "'it'\\''s'");
});

test("the pure core's cost in the tooltip is the benchmark's measured ratio at 1 MB", () => {
  const results = path.join(__dirname, '..', '..', '..', 'benchmarks', 'results', 'pure_core.json');
  const ratio = JSON.parse(fs.readFileSync(results, 'utf8'))['1000000'].ratio as number;
  assert.equal(PURE_CORE_COST, `edits about ${Math.round(ratio)}× slower`);
});
