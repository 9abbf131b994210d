// Entry point: wires the log, the server, the status bar, the token boundaries and the commands.
import * as vscode from 'vscode';
import { Boundaries } from './boundaries';
import { registerCommands } from './commands';
import { OpenAhead } from './openAhead';
import { ServerManager } from './server';
import { RESTART_KEYS, SECTION, SERVER_KEYS } from './settings';
import { StatusBar } from './statusBar';

let server: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Tokenline', { log: true });
  const boundaries = new Boundaries();
  server = new ServerManager(log, boundaries.middleware, {
    extension: context.extensionUri.fsPath,
    storage: context.globalStorageUri.fsPath,
  });
  const status = new StatusBar(server);
  context.subscriptions.push(log, server, status, new OpenAhead(server));
  registerCommands(context, server, status, boundaries, log);

  const affects = (e: vscode.ConfigurationChangeEvent, keys: readonly string[]) =>
    keys.some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!server) {
        return;
      }
      if (affects(e, RESTART_KEYS)) {
        log.info('Server settings changed; restarting the server.');
        void server.restart();
      } else if (affects(e, SERVER_KEYS)) {
        server.sendSettings();
      }
      if (e.affectsConfiguration(`${SECTION}.boundaries.enabled`)) {
        boundaries.settingsChanged(server.languageClient);
      }
      if (e.affectsConfiguration(`${SECTION}.warnAt`)) {
        status.refresh();
      }
    }),
  );
  void server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
