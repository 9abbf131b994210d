// Opening ahead: the moment a file's editor tab opens, the server is told (`tokenline/willOpen`,
// docs/protocol.md) and counts the file from disk, so that the status bar shows the count while
// VS Code still hands the editor's text to the extension host (0.4-0.6 s for 1 MB, 1.2-1.6 s for
// 5 MB in code-server); the didOpen follows as always. Only for files Tokenline would attach to,
// judged by their name: the document's language is not known before it arrives.
import * as vscode from 'vscode';
import { contributedLanguages, LanguageContribution, languagesOf } from './fileLanguages';
import type { ServerManager } from './server';

export class OpenAhead implements vscode.Disposable {
  private languages: LanguageContribution[] | undefined;
  /** Files told and not opened yet (a tab is seen opened, then made active: one willOpen). */
  private readonly told = new Set<string>();
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly server: ServerManager) {
    this.disposables = [
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        // A tab is opened before it is made active: the earlier event is the one to take.
        for (const tab of [...e.opened, ...e.changed.filter((t) => t.isActive)]) {
          if (tab.input instanceof vscode.TabInputText) {
            this.willOpen(tab.input.uri);
          }
        }
        for (const tab of e.closed) {
          if (tab.input instanceof vscode.TabInputText) {
            this.told.delete(tab.input.uri.toString());
          }
        }
      }),
      vscode.workspace.onDidOpenTextDocument((d) => this.told.delete(d.uri.toString())),
      vscode.extensions.onDidChange(() => (this.languages = undefined)),
    ];
  }

  private willOpen(uri: vscode.Uri): void {
    if (uri.scheme !== 'file' || !this.server.languageClient) {
      return;
    }
    const key = uri.toString();
    if (this.told.has(key) || vscode.workspace.textDocuments.some((d) => d.uri.toString() === key)) {
      return; // open already: its didOpen went, or it is not Tokenline's
    }
    this.languages ??= contributedLanguages(vscode.extensions.all.map((e) => e.packageJSON as unknown));
    const associations = vscode.workspace.getConfiguration('files', uri).get<Record<string, string>>('associations') ?? {};
    const ids = languagesOf(uri.path, this.languages, associations);
    // A file no language names opens as plain text.
    if (this.server.wouldAttach(uri, ids.length > 0 ? ids : ['plaintext'])) {
      this.told.add(key);
      this.server.willOpen(uri);
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
