// Which process runs the language server, and what to run when `tokenline` is not installed.
// Pure: the caller supplies the settings, the Python extension's interpreter and the platform.

export interface Launch {
  /** Executable and arguments. */
  command: string;
  args: string[];
  /** Where the command came from, for messages. */
  source: 'setting' | 'python-setting' | 'python-extension' | 'default-python';
  /** The interpreter, when the server runs as `python -m tokenline serve`. */
  python?: string;
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

export function defaultPython(platform: string): string {
  return platform === 'win32' ? 'python' : 'python3';
}

export function resolveLaunch(i: LaunchInputs): Launch {
  const expand = (v: string) => expandVariables(v, i.home, i.workspaceFolder);
  if (i.serverCommand.length > 0) {
    const [command, ...args] = i.serverCommand.map(expand);
    return { command, args, source: 'setting' };
  }
  let python: string;
  let source: Launch['source'];
  if (i.python) {
    python = expand(i.python);
    source = 'python-setting';
  } else if (i.pythonFromExtension) {
    python = i.pythonFromExtension;
    source = 'python-extension';
  } else {
    python = defaultPython(i.platform);
    source = 'default-python';
  }
  return { command: python, args: [...SERVE_ARGS], source, python };
}

/** Arguments that make the interpreter exit 0 only when `tokenline` is importable. */
export function importCheckArgs(): string[] {
  return ['-c', 'import tokenline'];
}

/** The install the error notification offers: pip, into that same interpreter. */
export function pipInstallArgs(spec = 'tokenline'): string[] {
  return ['-m', 'pip', 'install', '--upgrade', spec];
}

export function describeSource(l: Launch): string {
  switch (l.source) {
    case 'setting':
      return 'the setting tokenline.server.command';
    case 'python-setting':
      return 'the setting tokenline.python';
    case 'python-extension':
      return "the Python extension's selected interpreter";
    default:
      return 'the default interpreter (tokenline.python is not set)';
  }
}
