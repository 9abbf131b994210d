// The commands: choose the model (modelPicker.ts), set the context window (and both from the status
// bar), compare models (compareModels.ts), show the token at the cursor, copy the selection's token
// ids, toggle boundaries, restart, show the log.
import * as vscode from 'vscode';
import type { Boundaries } from './boundaries';
import { compareModels } from './compareModels';
import { formatCount, idsText, tokenAtText } from './format';
import { applyModel, chooseModel, settingsTarget } from './modelPicker';
import { asRange, IDS, IdsParams, IdsResult, Status, TOKEN_AT, TokenAt, TokenAtParams } from './protocol';
import type { ServerManager } from './server';
import type { StatusBar } from './statusBar';
import { parseContextWindow, readSettings, SECTION } from './settings';

const COMMON_WINDOWS = [2048, 4096, 8192, 16384, 32768, 65536, 128000, 131072, 200000, 1000000, 1048576];

export function registerCommands(
  context: vscode.ExtensionContext,
  server: ServerManager,
  status: StatusBar,
  boundaries: Boundaries,
  log: vscode.LogOutputChannel,
): void {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  // With a model name (a keybinding's or another extension's argument), that model, no picker.
  reg('tokenline.chooseModel', (value) =>
    typeof value === 'string' ? applyModel(server, value) : chooseModel(server, activeStatus(server, status)),
  );
  reg('tokenline.setContextWindow', () => setContextWindow());
  reg('tokenline.statusMenu', async () => {
    if (await chooseModel(server, activeStatus(server, status), '(1/2)')) {
      await setContextWindow('(2/2)');
    }
  });
  reg('tokenline.compareModels', () => compareModels(server));
  reg('tokenline.showTokenAtCursor', () => showTokenAtCursor(server));
  reg('tokenline.copyTokenIds', () => copyTokenIds(server));
  reg('tokenline.toggleBoundaries', () => boundaries.toggle());
  reg('tokenline.restartServer', () => server.restart());
  reg('tokenline.showOutput', () => log.show(true));
}

function current() {
  return readSettings(vscode.workspace.getConfiguration(SECTION, vscode.window.activeTextEditor?.document.uri));
}

/** The active document's last status (the model it is counted with), when Tokenline counts it. */
function activeStatus(server: ServerManager, status: StatusBar): Status | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && server.attaches(doc) ? status.statusOf(doc.uri) : undefined;
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
    await vscode.workspace.getConfiguration(SECTION).update('contextWindow', value, settingsTarget());
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
