import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatStatusText, chatTooltipText, shortCount } from '../src/chatStatus';
import type { ChatStatus, Status } from '../src/protocol';

const chat: ChatStatus = {
  conversations: 1204,
  largest: 3210,
  total: 1_234_567,
  estimate: false,
  mode: 'template',
  errors: 0,
  pending: false,
};
const status: Status = {
  uri: 'file:///w/train.jsonl',
  version: 1,
  tokens: 2_000_000,
  contextWindow: 8192,
  model: 'llama-3',
  compiled: true,
  chat,
};

test('short totals', () => {
  assert.equal(shortCount(980), '980');
  assert.equal(shortCount(34_512), '34.5K');
  assert.equal(shortCount(1_234_567), '1.2M');
  assert.equal(shortCount(123_456_789), '123M');
});

test('chat status bar text', () => {
  assert.equal(chatStatusText(chat), '1,204 conversations · max 3,210 · total 1.2M tok');
  assert.equal(chatStatusText({ ...chat, estimate: true }), '1,204 conversations · max ≈3,210 · total ≈1.2M tok');
  assert.equal(chatStatusText({ ...chat, conversations: 1, pending: true }), '1… conversation · max 3,210 · total 1.2M tok');
  assert.equal(chatStatusText({ ...chat, errors: 2 }), '1,204 conversations · max 3,210 · total 1.2M tok · $(warning) 2');
});

test('chat tooltip', () => {
  const text = chatTooltipText(status, chat);
  assert.match(text, /^Tokenline: chat file, 1,204 conversations$/m);
  assert.match(text, /Largest conversation: 3,210 tokens \(context window 8,192\)/);
  assert.match(text, /Total: 1,234,567 tokens/);
  assert.match(text, /Mean: 1,025 tokens per conversation/);
  assert.doesNotMatch(text, /over the/);
  const over = chatTooltipText({ ...status, budget: 2000 }, { ...chat, errors: 1, pending: true, mode: 'estimate' });
  assert.match(over, /Some conversations are over the budget/);
  assert.match(over, /1 record could not be counted/);
  assert.match(over, /Counting the rest of the file/);
  assert.match(over, /OpenAI's rule/);
});
