// The interpreter selected in the Python extension (ms-python.python), when it is installed.
import * as vscode from 'vscode';

const PYTHON_EXTENSION = 'ms-python.python';

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } | undefined;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}

async function api(log: vscode.LogOutputChannel): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch (err) {
    log.warn(`The Python extension did not activate: ${String(err)}`);
    return undefined;
  }
}

export async function selectedInterpreter(
  resource: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const py = await api(log);
  if (!py) {
    return undefined;
  }
  try {
    const envPath = py.environments?.getActiveEnvironmentPath?.(resource)?.path;
    if (envPath) {
      return envPath;
    }
    return py.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
  } catch (err) {
    log.warn(`Could not read the Python extension's interpreter: ${String(err)}`);
    return undefined;
  }
}

/** Fires when the user selects another interpreter in the Python extension. */
export async function onDidChangeInterpreter(
  listener: () => void,
  log: vscode.LogOutputChannel,
): Promise<vscode.Disposable | undefined> {
  const py = await api(log);
  return py?.environments?.onDidChangeActiveEnvironmentPath?.(() => listener());
}
