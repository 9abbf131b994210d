// A chat file's status (`tokenline/status` `chat`): the status bar's `1,204 conversations · max
// 3,210 · total 1.2M tok` (`≈` before the numbers when they are OpenAI's rule's estimate) and the
// tooltip's lines. Pure functions, no `vscode` import.

import { formatCount } from './format';
import type { ChatStatus, Status } from './protocol';

/** `1.2M`, `34.5K`, `980`: a large total, short. */
export function shortCount(n: number): string {
  const units: Array<[number, string]> = [
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [size, unit] of units) {
    if (n >= size) {
      const v = n / size;
      return `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10}${unit}`;
    }
  }
  return formatCount(n);
}

/** `1,204 conversations · max 3,210 · total 1.2M tok`; `…` after the count while still counting. */
export function chatStatusText(c: ChatStatus): string {
  const approx = c.estimate ? '≈' : '';
  const n = `${formatCount(c.conversations)}${c.pending ? '…' : ''}`;
  const noun = c.conversations === 1 ? 'conversation' : 'conversations';
  const errors = c.errors > 0 ? ` · $(warning) ${formatCount(c.errors)}` : '';
  return `${n} ${noun} · max ${approx}${formatCount(c.largest)} · total ${approx}${shortCount(c.total)} tok${errors}`;
}

/** What the mode means, for the tooltip. */
export function modeText(mode: string): string {
  switch (mode) {
    case 'template':
      return "billed as the model's chat template renders each conversation";
    case 'mistral':
      return "billed as mistral-common encodes each conversation";
    case 'estimate':
      return "estimated by OpenAI's rule (3 tokens per message, 1 per name, 3 to prime the reply)";
    case 'contents only':
      return 'the contents only (the model has no chat template)';
    default:
      return mode;
  }
}

/** The tooltip of a chat file: its conversations, how they are counted, the largest against the window. */
export function chatTooltipText(s: Status, c: ChatStatus): string {
  const approx = c.estimate ? '≈' : '';
  const limit = s.budget ?? s.contextWindow;
  const limitName = s.budget !== undefined ? 'budget' : 'context window';
  const lines = [
    `Tokenline: chat file, ${formatCount(c.conversations)} ${c.conversations === 1 ? 'conversation' : 'conversations'}`,
    `Model: ${s.model || 'default'}, ${modeText(c.mode)}`,
    `Largest conversation: ${approx}${formatCount(c.largest)} tokens (${limitName} ${formatCount(limit)})`,
    `Total: ${approx}${formatCount(c.total)} tokens`,
  ];
  if (c.conversations > 0) {
    lines.push(`Mean: ${approx}${formatCount(Math.round(c.total / c.conversations))} tokens per conversation`);
  }
  if (c.largest > limit) {
    lines.push(`Some conversations are over the ${limitName}: see the Problems panel`);
  }
  if (c.errors > 0) {
    lines.push(`${formatCount(c.errors)} record${c.errors === 1 ? '' : 's'} could not be counted (skipped): see the Problems panel`);
  }
  if (c.pending) {
    lines.push('Counting the rest of the file…');
  }
  lines.push(`Raw text: ${formatCount(s.tokens)}${s.pending ? '…' : ''} tokens`, '', 'Click to choose the model and the context window.');
  return lines.join('\n');
}
