// Token boundaries: the server's semantic tokens (legend tokenlineA/tokenlineB + modifiers), coloured
// by the defaults in package.json. This module only switches them on and off: while they are off,
// the semantic-token requests are answered empty here and never reach the server.
import * as vscode from 'vscode';
import { SemanticTokensRegistrationType } from 'vscode-languageclient/node';
import type { LanguageClient, Middleware } from 'vscode-languageclient/node';
import { readSettings, SECTION } from './settings';

export class Boundaries {
  private enabled = readSettings(vscode.workspace.getConfiguration(SECTION)).boundariesEnabled;

  readonly middleware: Middleware = {
    provideDocumentSemanticTokens: (document, token, next) => (this.enabled ? next(document, token) : empty()),
    provideDocumentSemanticTokensEdits: (document, previousResultId, token, next) =>
      this.enabled ? next(document, previousResultId, token) : empty(),
    provideDocumentRangeSemanticTokens: (document, range, token, next) =>
      this.enabled ? next(document, range, token) : empty(),
  };

  get isEnabled(): boolean {
    return this.enabled;
  }

  /** Flips `tokenline.boundaries.enabled` in the user settings. */
  async toggle(): Promise<void> {
    const on = !this.enabled;
    await vscode.workspace.getConfiguration(SECTION).update('boundaries.enabled', on, vscode.ConfigurationTarget.Global);
    void vscode.window.setStatusBarMessage(`Tokenline: token boundaries ${on ? 'on' : 'off'}`, 2500);
  }

  /** Re-reads the setting; when it changed, makes VS Code ask for the semantic tokens again. */
  settingsChanged(client: LanguageClient | undefined): void {
    const on = readSettings(vscode.workspace.getConfiguration(SECTION)).boundariesEnabled;
    if (on !== this.enabled) {
      this.enabled = on;
      this.refresh(client);
    }
  }

  private refresh(client: LanguageClient | undefined): void {
    const feature = client?.getFeature(SemanticTokensRegistrationType.method);
    const fired = new Set<vscode.EventEmitter<void>>();
    for (const editor of vscode.window.visibleTextEditors) {
      const emitter = feature?.getProvider(editor.document)?.onDidChangeSemanticTokensEmitter;
      if (emitter && !fired.has(emitter)) {
        fired.add(emitter);
        emitter.fire();
      }
    }
  }
}

function empty(): vscode.SemanticTokens {
  return new vscode.SemanticTokens(new Uint32Array(0));
}
