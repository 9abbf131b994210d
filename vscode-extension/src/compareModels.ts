// The Compare Models command: the document's count, and the selection's, under its own model and
// under each of `tokenline.compareModels` (`tokenline/compare`), listed in a quick pick.
import * as vscode from 'vscode';
import { compareItems } from './compareTable';
import { asRange, COMPARE, CompareParams, CompareResult } from './protocol';
import type { ServerManager } from './server';

export async function compareModels(server: ServerManager): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !server.attaches(editor.document)) {
    void vscode.window.showInformationMessage(
      'Tokenline: open a document Tokenline counts (see the setting tokenline.languages).',
    );
    return;
  }
  const ranges = editor.selections.filter((s) => !s.isEmpty);
  const params: CompareParams = { uri: server.asProtocolUri(editor.document.uri), ranges: ranges.map(asRange) };
  let result: CompareResult;
  try {
    result = await server.request<CompareResult>(COMPARE, params);
  } catch (err) {
    void vscode.window.showErrorMessage(`Tokenline: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (result.compare.length === 0) {
    const open = 'Open Settings';
    const picked = await vscode.window.showInformationMessage(
      'Tokenline: no models to compare with. Name them in the setting tokenline.compareModels (e.g. o200k_base).',
      open,
    );
    if (picked === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'tokenline.compareModels');
    }
    return;
  }
  const selected = ranges.length === 0 ? '' : ranges.length === 1 ? ' and the selection' : ` and ${ranges.length} selections`;
  await vscode.window.showQuickPick(compareItems(result.document, result.compare, ranges.length > 0), {
    title: 'Tokenline: Compare Models',
    placeHolder: `Tokens of this document${selected} under each model`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
}
