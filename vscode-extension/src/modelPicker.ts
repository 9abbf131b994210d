// Choosing the model: the quick pick of what the server lists (modelRows.ts), a tokenizer file or a
// typed name, and setting `tokenline.model` so that the server loads it, even when the setting
// already had that value (a model chosen again after it failed to load).
import * as vscode from 'vscode';
import { MODELS, ModelsParams, ModelsResult, Status } from './protocol';
import { modelRows, pickerPlaceholder } from './modelRows';
import type { ServerManager } from './server';
import { readSettings, SECTION } from './settings';

interface ModelItem extends vscode.QuickPickItem {
  value?: string;
  action?: 'browse' | 'type';
  inUse?: boolean;
}

/** Workspace settings when a folder is open, else user settings. */
export function settingsTarget(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
}

/**
 * Quick pick of the server's models, a tokenizer file or a typed name; true when one was chosen.
 * `status` is the active document's, when it has one: the picker checks the model it is counted
 * with and names a model that failed to load.
 */
export async function chooseModel(server: ServerManager, status: Status | undefined, step = ''): Promise<boolean> {
  const doc = vscode.window.activeTextEditor?.document;
  const setting = readSettings(vscode.workspace.getConfiguration(SECTION, doc?.uri)).model;
  const items = await modelItems(server, status, doc);
  const picked = await pickOne(
    items,
    `Tokenline: Model ${step}`.trim(),
    pickerPlaceholder(setting, status),
    items.find((i) => i.inUse),
  );
  const value = await valueOf(picked, setting);
  if (value === undefined) {
    return false;
  }
  await applyModel(server, value);
  return true;
}

async function modelItems(server: ServerManager, status: Status | undefined, doc?: vscode.TextDocument): Promise<ModelItem[]> {
  const items: ModelItem[] = [];
  try {
    const params: ModelsParams = doc && status ? { uri: server.asProtocolUri(doc.uri) } : {};
    const { models } = await server.request<ModelsResult>(MODELS, params);
    for (const row of modelRows(models, status)) {
      items.push(
        row.heading !== undefined
          ? { label: row.heading, kind: vscode.QuickPickItemKind.Separator }
          : { label: row.label, description: row.description, value: row.value, inUse: row.inUse },
      );
    }
  } catch (err) {
    items.push({ label: '$(warning) The server cannot list models', detail: String(err instanceof Error ? err.message : err) });
  }
  items.push(
    { label: 'Other', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(file) Tokenizer file (.model, tokenizer.json, tekken*.json)…', action: 'browse' },
    { label: '$(edit) Model name, tiktoken encoding, path or Hugging Face repo id…', action: 'type' },
  );
  return items;
}

/** The setting a picked row stands for (asking for a file or a name when it is an action). */
async function valueOf(picked: ModelItem | undefined, setting: string): Promise<string | undefined> {
  if (picked?.action === 'browse') {
    const files = await vscode.window.showOpenDialog({
      title: 'Tokenizer file',
      canSelectMany: false,
      filters: { 'Tokenizer files': ['model', 'json'], 'All files': ['*'] },
    });
    return files?.[0]?.fsPath;
  }
  if (picked?.action === 'type') {
    return vscode.window.showInputBox({
      title: 'Tokenline: Model',
      value: setting,
      prompt:
        'A bundled model name, a tiktoken encoding or OpenAI model name (o200k_base, gpt-4o), a path to a tokenizer file, or a Hugging Face repo id in the local cache.',
    });
  }
  return picked?.value;
}

/**
 * Sets `tokenline.model`. VS Code reports no change when the setting already has the value, and the
 * server would then never hear of the choice: the settings are sent again, and the server tries the
 * model again (it failed to load before, or loads now that tiktoken's cache has it).
 */
export async function applyModel(server: ServerManager, value: string): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const where = settingsTarget();
  const inspected = config.inspect<string>('model');
  const before = where === vscode.ConfigurationTarget.Workspace ? inspected?.workspaceValue : inspected?.globalValue;
  await config.update('model', value, where);
  if (before === value) {
    server.sendSettings();
  }
}

/** A quick pick that opens on `active` (the model in use), so that Enter keeps it. */
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
