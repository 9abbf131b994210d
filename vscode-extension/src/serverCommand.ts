// Which process runs the language server: `tokenline.server.command`, else `tokenline.python -m
// tokenline serve`, else the server bundled with the extension (bundledEnv.ts), in a private
// environment made with the Python extension's interpreter or a Python on PATH.
// Pure: the caller supplies the settings, the Python extension's interpreter and the platform.
import { Candidate, pathCandidates } from './pythonChoice';

export interface Launch {
  /** Executable and arguments. */
  command: string;
  args: string[];
  /** Where the command came from, for messages. */
  source: 'setting' | 'python-setting' | 'bundled';
  /** The interpreter, when the server runs as `python -m tokenline serve`. */
  python?: string;
}

/** No setting names a server: the bundled one, in an environment made with one of these. */
export interface BundledPlan {
  source: 'bundled';
  candidates: Candidate[];
  /** The Python extension's interpreter is among them (a change of it is worth a restart). */
  fromPythonExtension: boolean;
}

export interface LaunchInputs {
  /** `tokenline.server.command`, already split into arguments. */
  serverCommand: string[];
  /** `tokenline.python`. */
  python: string;
  /** The interpreter selected in the Python extension, if it is installed and has one. */
  pythonFromExtension?: string;
  platform: string;
  home?: string;
  workspaceFolder?: string;
}

export const SERVE_ARGS = ['-m', 'tokenline', 'serve'];

/** Expands a leading `~` and `${workspaceFolder}`/`${userHome}` in a path or argument. */
export function expandVariables(value: string, home?: string, workspaceFolder?: string): string {
  let v = value;
  if (home && (v === '~' || v.startsWith('~/') || v.startsWith('~\\'))) {
    v = home + v.slice(1);
  }
  if (home) {
    v = v.split('${userHome}').join(home);
  }
  if (workspaceFolder) {
    v = v.split('${workspaceFolder}').join(workspaceFolder);
  }
  return v;
}

export function resolveLaunch(i: LaunchInputs): Launch | BundledPlan {
  const expand = (v: string) => expandVariables(v, i.home, i.workspaceFolder);
  if (i.serverCommand.length > 0) {
    const [command, ...args] = i.serverCommand.map(expand);
    return { command, args, source: 'setting' };
  }
  if (i.python) {
    const python = expand(i.python);
    return { command: python, args: [...SERVE_ARGS], source: 'python-setting', python };
  }
  const fromExtension: Candidate[] = i.pythonFromExtension
    ? [{ command: i.pythonFromExtension, from: "the Python extension's interpreter" }]
    : [];
  return {
    source: 'bundled',
    candidates: [...fromExtension, ...pathCandidates(i.platform)],
    fromPythonExtension: fromExtension.length > 0,
  };
}

/** Arguments that make the interpreter exit 0 only when `tokenline` is importable. */
export function importCheckArgs(): string[] {
  return ['-c', 'import tokenline'];
}

export function describeSource(l: { source: Launch['source'] }): string {
  switch (l.source) {
    case 'setting':
      return 'the setting tokenline.server.command';
    case 'python-setting':
      return 'the setting tokenline.python';
    default:
      return 'the server bundled with the extension (tokenline.python and tokenline.server.command are not set)';
  }
}
