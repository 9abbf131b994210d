// Text the extension shows: status bar, tooltip, token details, copied ids. Pure functions, no
// `vscode` import; numbers are grouped the way the server's diagnostics group them ("8,192").

import type { Status, TokenAt } from './protocol';

/**
 * What the pure-Python core costs against the compiled one, per edit: the median ratio at 1 MB
 * of benchmarks/bench_pure_core.py (benchmarks/results/pure_core.md).
 */
export const PURE_CORE_COST = 'edits about 20× slower';

const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(n: number): string {
  return grouped.format(n);
}

/** "1 token", "2 tokens", "1,234 tokens". */
export function tokens(n: number): string {
  return `${formatCount(n)} ${n === 1 ? 'token' : 'tokens'}`;
}

/** Share of the window, "15.1%"; one decimal, "0%" for nothing, never "100.0%" below the window. */
export function formatPercent(tokens: number, contextWindow: number): string {
  if (contextWindow <= 0) {
    return '';
  }
  const pct = (tokens / contextWindow) * 100;
  const shown = Math.floor(pct * 10) / 10;
  return `${Number.isInteger(shown) ? shown.toFixed(0) : shown.toFixed(1)}%`;
}

export type Level = 'ok' | 'warning' | 'error';

/** Same thresholds as the server's diagnostics: Error past the window, Warning at warnAt × window. */
export function budgetLevel(tokens: number, contextWindow: number, warnAt: number): Level {
  if (tokens > contextWindow) {
    return 'error';
  }
  if (tokens >= warnAt * contextWindow) {
    return 'warning';
  }
  return 'ok';
}

type Limits = Pick<Status, 'contextWindow' | 'budget' | 'budgetModel' | 'budgetTokens'>;

/** Whether the project budget is the limit: it is, unless it names a model that cannot be loaded (then the server holds the window). */
export function budgetApplies(s: Limits): boolean {
  return s.budget !== undefined && (s.budgetModel === undefined || typeof s.budgetTokens === 'number');
}

/** What a document's count is held to: its project budget when it has one, else the window. */
export function limitOf(s: Limits): number {
  return budgetApplies(s) && s.budget !== undefined ? s.budget : s.contextWindow;
}

/** The count held to that limit: the document's, or the budget's model's when the budget names one. */
export function heldOf(s: Limits & Pick<Status, 'tokens'>): number {
  return budgetApplies(s) && typeof s.budgetTokens === 'number' ? s.budgetTokens : s.tokens;
}

/**
 * `1,234 / 8,192 tokens`, or with a selection `Sel 56 · 1,234 / 8,192`; against a project budget
 * `1,234 / 2,000 tokens (budget)` and `Sel 56 · 1,234 / 2,000 (budget)`. While the count is catching
 * up with the text (`pending`), it reads `1,234… / 8,192 tokens`.
 */
export function statusText(
  tokens: number,
  limit: number,
  selection?: number,
  isBudget = false,
  pending = false,
): string {
  const counts = `${formatCount(tokens)}${pending ? '…' : ''} / ${formatCount(limit)}`;
  const tail = isBudget ? ' (budget)' : '';
  return selection === undefined ? `${counts} tokens${tail}` : `Sel ${formatCount(selection)} · ${counts}${tail}`;
}

/** The status bar's colour: the count's level, and at least a warning while the chosen model
 * cannot be loaded (the count is then another model's). */
export function statusLevel(s: Status, warnAt: number): Level {
  const level = budgetLevel(heldOf(s), limitOf(s), warnAt);
  return level === 'ok' && s.modelError !== undefined ? 'warning' : level;
}

/** The status bar's text: the counts, after a warning icon while the chosen model cannot be loaded. */
export function statusBarText(s: Status, selection?: number): string {
  const icon = s.modelError !== undefined ? '$(warning) ' : '';
  return icon + statusText(heldOf(s), limitOf(s), selection, budgetApplies(s), s.pending === true);
}

export interface TooltipInput {
  status: Status;
  warnAt: number;
  selection?: number;
  selectionRanges?: number;
  /** The document has changed since the counted version. */
  pending?: boolean;
}

export function tooltipText(t: TooltipInput): string {
  const s = t.status;
  const limit = limitOf(s);
  const held = heldOf(s);
  const lines = [`Tokenline: ${tokens(s.tokens)}`, `Model: ${s.model || 'default'}`];
  if (s.modelError !== undefined) {
    const wanted = s.requestedModel ?? 'The chosen model';
    lines.push(`Warning: ${wanted} could not be loaded, so ${s.model || 'the default'} counts instead:`, s.modelError);
  }
  if (s.budget !== undefined) {
    const from = s.budgetPattern ? ` for ${s.budgetPattern}` : '';
    if (s.budgetModel === undefined) {
      lines.push(`Budget: ${tokens(s.budget)}${from} (${formatPercent(s.tokens, s.budget)} used)`);
    } else if (typeof s.budgetTokens === 'number') {
      lines.push(
        `Budget: ${formatCount(s.budget)} ${s.budgetModel} tokens${from} ` +
          `(${formatCount(s.budgetTokens)}, ${formatPercent(s.budgetTokens, s.budget)} used)`,
      );
    } else {
      lines.push(`Budget: ${formatCount(s.budget)} ${s.budgetModel} tokens${from}, not counted: ${s.budgetError ?? 'the model cannot be loaded'}`);
    }
    lines.push(`Context window: ${tokens(s.contextWindow)}`);
  } else {
    lines.push(`Context window: ${tokens(s.contextWindow)} (${formatPercent(s.tokens, s.contextWindow)} used)`);
  }
  const level = budgetLevel(held, limit, t.warnAt);
  if (level === 'error') {
    lines.push(`Over the ${budgetApplies(s) ? 'budget' : 'window'} by ${tokens(held - limit)}`);
  } else if (level === 'warning') {
    lines.push(`At or above the warning threshold (${formatPercent(t.warnAt, 1)})`);
  }
  if (t.selection !== undefined) {
    const n = t.selectionRanges ?? 1;
    lines.push(`Selection: ${tokens(t.selection)}${n > 1 ? ` in ${n} selections, each encoded alone` : ''}`);
  }
  lines.push(s.compiled ? 'Compiled core: yes' : `Compiled core: no (pure-Python core: ${PURE_CORE_COST})`);
  if (t.status.pending) {
    lines.push('Counting the latest changes… (this model re-encodes the whole text)');
  } else if (t.pending) {
    lines.push('Updating…');
  }
  lines.push(
    '',
    s.modelError !== undefined
      ? 'Click to choose the model again (once it can load) or another, and the context window.'
      : 'Click to choose the model and the context window.',
  );
  return lines.join('\n');
}

/** One line about the token under the cursor. */
export function tokenAtText(t: TokenAt): string {
  const ids = t.ids ?? [t.id];
  if (ids.length > 1) {
    // Tokens that share a character: their ids and each one's bytes.
    const last = t.index + ids.length;
    return (
      `Tokens ${formatCount(t.index + 1)}–${formatCount(last)} of ${formatCount(t.total)}: ` +
      `ids ${ids.join(', ')}, bytes ${(t.bytes ?? []).join(' | ')}, text ${JSON.stringify(t.text)}`
    );
  }
  return (
    `Token ${formatCount(t.index + 1)} of ${formatCount(t.total)}: id ${t.id}, ` +
    `piece ${JSON.stringify(t.piece)}, text ${JSON.stringify(t.text)}`
  );
}

/** Token ids as copied: one JSON array per range, one range per line. */
export function idsText(ids: number[][]): string {
  return ids.map((row) => `[${row.join(', ')}]`).join('\n');
}

/** Quotes a command line for the log so it can be pasted into a POSIX shell. */
export function shellQuote(args: readonly string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
