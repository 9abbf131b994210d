// The status bar item: `1,234 / 8,192 tokens` for the active editor (`1,234 / 2,000 tokens (budget)`
// when the project configuration gives the file a budget), `Sel 56 · 1,234 / 8,192` with a
// selection, warning/error colours (a warning icon and colour while the chosen model cannot be
// loaded, until one loads), a tooltip with the details; a click opens the model and
// context-window picker. It renders the server's `tokenline/status` notifications and asks
// `tokenline/count` for selections, asynchronously, so typing never waits on it. With compare
// models (`tokenline.compareModels`) the tooltip adds their counts as a table, and the selection
// is sent to the server (`tokenline/selection`), which counts it under each of them.
import * as vscode from 'vscode';
import { chatStatusText, chatTooltipText } from './chatStatus';
import { compareTable, tooltipMarkdown } from './compareTable';
import { statusBarText, statusLevel, tooltipText } from './format';
import { asRange, COUNT, CountParams, CountResult, SELECTION, SelectionParams, Status } from './protocol';
import type { ServerManager } from './server';
import { readSettings, SECTION } from './settings';

const SELECTION_DELAY_MS = 60;

interface SelectionCount {
  uri: string;
  /** Document version the ranges were taken from. */
  version: number;
  total: number;
  ranges: number;
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly statuses = new Map<string, Status>();
  private readonly disposables: vscode.Disposable[] = [];
  private selection: SelectionCount | undefined;
  private selectionTimer: NodeJS.Timeout | undefined;
  private selectionRequest: vscode.CancellationTokenSource | undefined;

  constructor(private readonly server: ServerManager) {
    this.item = vscode.window.createStatusBarItem('tokenline.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Tokenline';
    this.disposables.push(
      this.item,
      server.onDidReceiveStatus((s) => this.onStatus(s)),
      server.onDidChangeState(() => this.render()),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.selection = undefined;
        this.scheduleSelectionCount();
        this.render();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor === vscode.window.activeTextEditor) {
          this.scheduleSelectionCount();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((d) => this.statuses.delete(d.uri.toString())),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        // A file counted ahead whose tab closed before its document opened: its count goes.
        for (const tab of e.closed) {
          const key = tab.input instanceof vscode.TabInputText ? tab.input.uri.toString() : undefined;
          if (key && !vscode.workspace.textDocuments.some((d) => d.uri.toString() === key)) {
            this.statuses.delete(key);
          }
        }
        this.render();
      }),
    );
    this.render();
  }

  /** Settings such as warnAt changed. */
  refresh(): void {
    this.render();
  }

  /** The last status of a document, if the server sent one. */
  statusOf(uri: vscode.Uri): Status | undefined {
    return this.statuses.get(uri.toString());
  }

  private onStatus(s: Status): void {
    this.statuses.set(s.uri, s);
    const doc = vscode.window.activeTextEditor?.document;
    if (s.version === null) {
      this.render(); // counted ahead of its didOpen: shown while its tab is the active one
    } else if (doc && doc.uri.toString() === s.uri) {
      // The text changed under a selection: its count may have changed too.
      if (this.selection && this.selection.version !== doc.version) {
        this.scheduleSelectionCount();
      }
      this.render();
    }
  }

  private scheduleSelectionCount(): void {
    clearTimeout(this.selectionTimer);
    this.selectionTimer = setTimeout(() => void this.countSelection(), SELECTION_DELAY_MS);
  }

  /** Tells the server the selection (none: no ranges), which counts it under the compare models. */
  private sendSelection(doc: vscode.TextDocument, ranges: readonly vscode.Range[]): void {
    const client = this.server.languageClient;
    if (client && this.server.attaches(doc)) {
      const params: SelectionParams = { uri: this.server.asProtocolUri(doc.uri), ranges: ranges.map(asRange) };
      void client.sendNotification(SELECTION, params).catch(() => undefined);
    }
  }

  private async countSelection(): Promise<void> {
    this.selectionRequest?.cancel();
    const editor = vscode.window.activeTextEditor;
    const ranges = editor?.selections.filter((s) => !s.isEmpty) ?? [];
    if (editor) {
      this.sendSelection(editor.document, ranges);
    }
    if (!editor || ranges.length === 0 || !this.server.attaches(editor.document) || !this.server.languageClient) {
      if (this.selection) {
        this.selection = undefined;
        this.render();
      }
      return;
    }
    const doc = editor.document;
    const cts = new vscode.CancellationTokenSource();
    this.selectionRequest = cts;
    const params: CountParams = {
      uri: this.server.asProtocolUri(doc.uri),
      ranges: ranges.map(asRange),
    };
    try {
      const result = await this.server.request<CountResult>(COUNT, params, cts.token);
      if (cts.token.isCancellationRequested || vscode.window.activeTextEditor?.document !== doc) {
        return;
      }
      const total = result.counts.reduce((a, b) => a + b, 0);
      this.selection = { uri: doc.uri.toString(), version: doc.version, total, ranges: ranges.length };
      this.render();
    } catch {
      if (!cts.token.isCancellationRequested) {
        this.selection = undefined;
        this.render();
      }
    } finally {
      cts.dispose();
      if (this.selectionRequest === cts) {
        this.selectionRequest = undefined;
      }
    }
  }

  private render(): void {
    const item = this.item;
    const editor = vscode.window.activeTextEditor;
    if (this.server.state === 'failed') {
      item.text = '$(error) Tokenline';
      item.tooltip = `Tokenline is not running: ${this.server.failure ?? 'see the log'}.\nClick to show the log.`;
      item.command = 'tokenline.showOutput';
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      item.show();
      return;
    }
    const opening = this.opening(editor);
    if (opening) {
      this.show(opening.uri, opening.status, undefined);
      return;
    }
    if (!editor || !this.server.attaches(editor.document)) {
      item.hide();
      return;
    }
    const doc = editor.document;
    const status = this.statuses.get(doc.uri.toString());
    if (!status) {
      item.command = 'tokenline.statusMenu';
      item.text = '$(sync~spin) tokens';
      item.tooltip =
        this.server.state === 'running'
          ? 'Tokenline: counting…'
          : `Tokenline: ${this.server.activity ?? 'starting the server'}…`;
      item.backgroundColor = undefined;
      item.show();
      return;
    }
    this.show(doc.uri, status, doc.version);
  }

  /**
   * The file whose editor is opening (the active tab's, not yet the active editor's document)
   * and its status, when the server counted it ahead of its didOpen (openAhead.ts).
   */
  private opening(editor: vscode.TextEditor | undefined): { uri: vscode.Uri; status: Status } | undefined {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (!(input instanceof vscode.TabInputText)) {
      return undefined;
    }
    const key = input.uri.toString();
    if (editor?.document.uri.toString() === key || vscode.workspace.textDocuments.some((d) => d.uri.toString() === key)) {
      return undefined; // its document is there: the editor's status (or none) is the one
    }
    const status = this.statuses.get(key);
    return status ? { uri: input.uri, status } : undefined;
  }

  /** Shows a document's status; `version`: the document's (undefined before it is open). */
  private show(uri: vscode.Uri, status: Status, version: number | undefined): void {
    const item = this.item;
    item.command = 'tokenline.statusMenu';
    // The server's warnAt includes the project configuration's; older servers do not send it.
    const warnAt = status.warnAt ?? readSettings(vscode.workspace.getConfiguration(SECTION, uri)).warnAt;
    if (status.chat) {
      // A chat file: its conversations, each held to the limit (its diagnostics), not the file.
      item.text = chatStatusText(status.chat);
      item.tooltip = chatTooltipText(status, status.chat);
      item.backgroundColor =
        status.chat.largest > (status.budget ?? status.contextWindow)
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
      item.show();
      return;
    }
    const sel = this.selection?.uri === status.uri ? this.selection : undefined;
    item.text = statusBarText(status, sel?.total);
    const text = tooltipText({
      status,
      warnAt,
      selection: sel?.total,
      selectionRanges: sel?.ranges,
      pending: status.version !== null && version !== undefined && status.version < version,
    });
    const table = compareTable(status, sel?.total);
    item.tooltip = table ? markdown(tooltipMarkdown(text, table)) : text;
    const level = statusLevel(status, warnAt);
    item.backgroundColor =
      level === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    item.show();
  }

  dispose(): void {
    clearTimeout(this.selectionTimer);
    this.selectionRequest?.cancel();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function markdown(value: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(value, true);
  md.isTrusted = false;
  return md;
}
