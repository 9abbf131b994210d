// The document's counts under several models (`tokenline.compareModels`) as the status bar's
// tooltip shows them: a small Markdown table under the tooltip's text, the document's own model
// first, each other model with its difference from it; and the rows the Compare Models command
// lists. Pure functions, no `vscode` import.

import { formatCount, formatPercent } from './format';
import type { ModelCount, Status } from './protocol';

export interface CompareRow {
  model: string;
  /** `1,234`, or `—` for a model that cannot be loaded. */
  tokens: string;
  /** `+12%` against the document's own model; '' for that model and failed ones. */
  difference: string;
  /** `128,000 (1%)`, or `—` when the window is unknown. */
  window: string;
  /** `56`, or '' without a selection. */
  selection: string;
  error?: string;
}

/** `+12%`, `−8%`, `±0%`: how many more tokens `n` is than `base`. */
export function difference(n: number, base: number): string {
  if (base <= 0) {
    return '';
  }
  const pct = Math.round(((n - base) / base) * 100);
  return pct === 0 ? '±0%' : pct > 0 ? `+${pct}%` : `−${-pct}%`;
}

function row(c: ModelCount, base: number | undefined, withSelection: boolean): CompareRow {
  if (c.tokens === null) {
    return { model: c.model, tokens: '—', difference: '', window: '—', selection: '', error: c.error ?? 'not counted' };
  }
  const window =
    c.contextWindow === null ? '—' : `${formatCount(c.contextWindow)} (${formatPercent(c.tokens, c.contextWindow)})`;
  return {
    model: c.model,
    tokens: formatCount(c.tokens),
    difference: base === undefined ? '' : difference(c.tokens, base),
    window,
    selection: withSelection && c.selection !== null ? formatCount(c.selection) : '',
  };
}

/**
 * The rows: the document's own model (its status), then each compare model in the setting's
 * order. `selection` is the selection's count under the document's own model, when there is one.
 */
export function compareRows(s: Status, selection?: number): CompareRow[] {
  const own: ModelCount = { model: s.model, tokens: s.tokens, contextWindow: s.contextWindow, selection: selection ?? 0 };
  const withSelection = selection !== undefined;
  return [row(own, undefined, withSelection), ...(s.compare ?? []).map((c) => row(c, s.tokens, withSelection))];
}

/** Markdown's special characters escaped, so a model's name or path shows as written. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
}

/** The Markdown table of `compareRows`, and a line per model that cannot be loaded; '' without compare models. */
export function compareTable(s: Status, selection?: number): string {
  if (!s.compare?.length) {
    return '';
  }
  const rows = compareRows(s, selection);
  const withSelection = selection !== undefined;
  // Hovers draw tables without cell padding: an em space keeps right-aligned columns apart.
  const line = (first: string, rest: string[]) => `| ${[first, ...rest.map((c) => `&emsp;${c}`)].join(' | ')} |`;
  const head = ['Tokens', 'vs. this', 'Window', ...(withSelection ? ['Selection'] : [])];
  const align = [':---', '---:', '---:', '---:', ...(withSelection ? ['---:'] : [])];
  const lines = [line('Model', head), `|${align.join('|')}|`];
  rows.forEach((r, i) => {
    const name = escapeMarkdown(r.model) + (i === 0 ? ' *(this document)*' : '');
    lines.push(line(name, [r.tokens, r.difference, r.window, ...(withSelection ? [r.selection] : [])]));
  });
  const errors = rows.filter((r) => r.error).map((r) => `$(warning) ${escapeMarkdown(`${r.model}: ${r.error}`)}`);
  return [lines.join('\n'), ...errors].join('\n\n');
}

/**
 * The tooltip as Markdown: the plain tooltip's lines as they are (escaped, one per line), the
 * table before its last paragraph (the hint of what a click does).
 */
export function tooltipMarkdown(text: string, table: string): string {
  const lines = (t: string) =>
    t
      .split('\n')
      .map((line) => escapeMarkdown(line))
      .join('  \n');
  const cut = text.lastIndexOf('\n\n');
  const [body, footer] = cut < 0 ? [text, ''] : [text.slice(0, cut), text.slice(cut + 2)];
  return [lines(body), table, footer ? lines(footer) : ''].filter((part) => part !== '').join('\n\n');
}

export interface CompareItem {
  label: string;
  description: string;
  detail: string;
}

/** What the Compare Models command lists: the document's model, then each compare model. */
export function compareItems(document: ModelCount, compare: readonly ModelCount[], withSelection: boolean): CompareItem[] {
  const base = document.tokens ?? undefined;
  return [document, ...compare].map((c, i) => {
    const r = row(c, i === 0 ? undefined : base, withSelection);
    if (r.error !== undefined) {
      return { label: `$(warning) ${r.model}`, description: 'not counted', detail: r.error };
    }
    const vs = r.difference ? ` · ${r.difference}` : '';
    const details = [r.window === '—' ? 'Context window unknown' : `Context window ${r.window.replace(/\)$/, ' used)')}`];
    if (withSelection) {
      details.push(`Selection: ${r.selection} tokens`);
    }
    return {
      label: i === 0 ? `${r.model} (this document's model)` : r.model,
      description: `${r.tokens} tokens${vs}`,
      detail: details.join(' · '),
    };
  });
}
