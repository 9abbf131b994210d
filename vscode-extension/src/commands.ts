// The commands: choose the model, set the context window (and both from the status bar), show the
// token at the cursor, copy the selection's token ids, toggle boundaries, restart, show the log.
import * as vscode from 'vscode';
import type { Boundaries } from './boundaries';
import { formatCount, idsText, tokenAtText } from './format';
import { asRange, IDS, IdsParams, IdsResult, MODELS, ModelsResult, TOKEN_AT, TokenAt, TokenAtParams } from './protocol';
import type { ServerManager } from './server';
import { parseContextWindow, readSettings, SECTION } from './settings';

const COMMON_WINDOWS = [2048, 4096, 8192, 16384, 32768, 65536, 128000, 131072, 200000, 1000000, 1048576];

/** The picker's sections, by the `kind` the server gives each model. */
const MODEL_GROUPS: Record<string, string> = {
  bundled: 'Bundled',
  tiktoken: 'tiktoken encodings (cached)',
  workspace: 'Tokenizer files in the workspace',
  huggingface: 'Hugging Face cache',
};

interface ModelItem extends vscode.QuickPickItem {
  value?: string;
  action?: 'browse' | 'type';
}

export function registerCommands(
  context: vscode.ExtensionContext,
  server: ServerManager,
  boundaries: Boundaries,
  log: vscode.LogOutputChannel,
): void {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('tokenline.chooseModel', () => chooseModel(server));
  reg('tokenline.setContextWindow', () => setContextWindow());
  reg('tokenline.statusMenu', async () => {
    if (await chooseModel(server, '(1/2)')) {
      await setContextWindow('(2/2)');
    }
  });
  reg('tokenline.showTokenAtCursor', () => showTokenAtCursor(server));
  reg('tokenline.copyTokenIds', () => copyTokenIds(server));
  reg('tokenline.toggleBoundaries', () => boundaries.toggle());
  reg('tokenline.restartServer', () => server.restart());
  reg('tokenline.showOutput', () => log.show(true));
}

/** Workspace settings when a folder is open, else user settings. */
function target(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
}

function current() {
  return readSettings(vscode.workspace.getConfiguration(SECTION, vscode.window.activeTextEditor?.document.uri));
}

/** A quick pick that opens on `active` (the current model), so that Enter keeps it. */
function pickOne<T extends vscode.QuickPickItem>(items: T[], title: string, placeholder: string, active?: T): Promise<T | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<T>();
    qp.title = title;
    qp.placeholder = placeholder;
    qp.matchOnDescription = true;
    qp.items = items;
    if (active) {
      qp.activeItems = [active];
    }
    let accepted = false;
    qp.onDidAccept(() => {
      accepted = true;
      resolve(qp.selectedItems[0] ?? qp.activeItems[0]);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!accepted) {
        resolve(undefined);
      }
      qp.dispose();
    });
    qp.show();
  });
}

/** Quick pick of the server's models, a `.model` file or a typed name; true when one was chosen. */
async function chooseModel(server: ServerManager, step = ''): Promise<boolean> {
  const now = current().model;
  const items: ModelItem[] = [];
  try {
    const { models } = await server.request<ModelsResult>(MODELS, {});
    let group: string | undefined;
    for (const m of models) {
      const heading = MODEL_GROUPS[m.kind ?? 'bundled'] ?? 'Models';
      if (heading !== group) {
        items.push({ label: heading, kind: vscode.QuickPickItemKind.Separator });
        group = heading;
      }
      const chosen = m.value === now || (now === '' && m === models[0]);
      items.push({ label: `${chosen ? '$(check) ' : ''}${m.label}`, description: m.description, value: m.value });
    }
  } catch (err) {
    items.push({ label: '$(warning) The server cannot list models', detail: String(err instanceof Error ? err.message : err) });
  }
  items.push(
    { label: 'Other', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(file) Tokenizer file (.model, tokenizer.json, tekken*.json)…', action: 'browse' },
    { label: '$(edit) Model name, tiktoken encoding, path or Hugging Face repo id…', action: 'type' },
  );
  const picked = await pickOne(
    items,
    `Tokenline: Model ${step}`.trim(),
    `Current: ${now || 'the bundled default'}`,
    items.find((i) => i.label.startsWith('$(check) ')),
  );
  let value: string | undefined;
  if (picked?.action === 'browse') {
    const files = await vscode.window.showOpenDialog({
      title: 'Tokenizer file',
      canSelectMany: false,
      filters: { 'Tokenizer files': ['model', 'json'], 'All files': ['*'] },
    });
    value = files?.[0]?.fsPath;
  } else if (picked?.action === 'type') {
    value = await vscode.window.showInputBox({
      title: 'Tokenline: Model',
      value: now,
      prompt:
        'A bundled model name, a tiktoken encoding or OpenAI model name (o200k_base, gpt-4o), a path to a tokenizer file, or a Hugging Face repo id in the local cache (never downloaded).',
    });
  } else {
    value = picked?.value;
  }
  if (value === undefined) {
    return false;
  }
  await vscode.workspace.getConfiguration(SECTION).update('model', value, target());
  return true;
}

async function setContextWindow(step = ''): Promise<void> {
  const now = current().contextWindow;
  const sizes = COMMON_WINDOWS.includes(now) ? COMMON_WINDOWS : [...COMMON_WINDOWS, now].sort((a, b) => a - b);
  const items: (vscode.QuickPickItem & { value?: number })[] = sizes.map((n) => ({
    label: `${n === now ? '$(check) ' : ''}${formatCount(n)}`,
    description: n === now ? 'current' : undefined,
    value: n,
  }));
  items.push({ label: '$(edit) Other…' });
  const picked = await vscode.window.showQuickPick(items, {
    title: `Tokenline: Context Window ${step}`.trim(),
    placeHolder: `Current: ${formatCount(now)} tokens`,
  });
  if (!picked) {
    return;
  }
  let value = picked.value;
  if (value === undefined) {
    const typed = await vscode.window.showInputBox({
      title: 'Tokenline: Context Window',
      value: String(now),
      prompt: 'The model’s context window, in tokens.',
      validateInput: (t) => (parseContextWindow(t) ? undefined : 'A positive whole number of tokens.'),
    });
    value = typed === undefined ? undefined : parseContextWindow(typed);
  }
  if (value !== undefined) {
    await vscode.workspace.getConfiguration(SECTION).update('contextWindow', value, target());
  }
}

function attachedEditor(server: ServerManager): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !server.attaches(editor.document)) {
    void vscode.window.showInformationMessage(
      'Tokenline: open a document Tokenline counts (see the setting tokenline.languages).',
    );
    return undefined;
  }
  return editor;
}

async function showTokenAtCursor(server: ServerManager): Promise<void> {
  const editor = attachedEditor(server);
  if (!editor) {
    return;
  }
  const p = editor.selection.active;
  const params: TokenAtParams = {
    uri: server.asProtocolUri(editor.document.uri),
    position: { line: p.line, character: p.character },
  };
  try {
    const t = await server.request<TokenAt | null>(TOKEN_AT, params);
    if (!t) {
      void vscode.window.showInformationMessage('Tokenline: no token at the cursor.');
      return;
    }
    const r = t.range;
    editor.selection = new vscode.Selection(r.start.line, r.start.character, r.end.line, r.end.character);
    void vscode.window.showInformationMessage(`Tokenline: ${tokenAtText(t)}`);
  } catch (err) {
    void vscode.window.showErrorMessage(`Tokenline: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Copies the ids of each selection (the whole document when nothing is selected). */
async function copyTokenIds(server: ServerManager): Promise<void> {
  const editor = attachedEditor(server);
  if (!editor) {
    return;
  }
  const doc = editor.document;
  const selected = editor.selections.filter((s) => !s.isEmpty);
  const whole = selected.length === 0;
  const ranges = whole ? [new vscode.Range(0, 0, doc.lineCount - 1, doc.lineAt(doc.lineCount - 1).text.length)] : selected;
  const params: IdsParams = { uri: server.asProtocolUri(doc.uri), ranges: ranges.map(asRange) };
  try {
    const { ids } = await server.request<IdsResult>(IDS, params);
    await vscode.env.clipboard.writeText(idsText(ids));
    const n = ids.reduce((a, row) => a + row.length, 0);
    void vscode.window.setStatusBarMessage(
      `Tokenline: copied ${formatCount(n)} token ids${whole ? ' (whole document)' : ''}`,
      4000,
    );
  } catch (err) {
    void vscode.window.showErrorMessage(`Tokenline: ${err instanceof Error ? err.message : String(err)}`);
  }
}
