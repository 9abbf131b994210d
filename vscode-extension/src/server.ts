// Starts, restarts and stops `tokenline serve` through vscode-languageclient, and says so when it
// cannot: a missing interpreter, a `tokenline` package that is not importable (with an action that
// pip-installs it into that interpreter), a server that keeps crashing. Never a silent failure,
// never an endless restart loop.
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  ErrorAction,
  ErrorHandlerResult,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { DocumentFilter, documentSelector } from './documentSelector';
import { shellQuote } from './format';
import { STATUS, Status } from './protocol';
import { onDidChangeInterpreter, selectedInterpreter } from './pythonInterpreter';
import { RestartPolicy } from './restartPolicy';
import { describeSource, importCheckArgs, Launch, pipInstallArgs, resolveLaunch } from './serverCommand';
import { explicitServerSettings, readSettings, SECTION } from './settings';

/**
 * Answers the server's `workspace/configuration` for the `tokenline` section with the settings
 * the user set (no package.json defaults), so that user settings win over the project
 * configuration and the project configuration wins over the defaults; other sections as usual.
 */
const answerConfiguration: ConfigurationRequest.MiddlewareSignature = async (params, token, next) => {
  const answers = await next(params, token);
  if (!Array.isArray(answers)) {
    return answers;
  }
  return params.items.map((item, i) => {
    if (item.section !== SECTION) {
      return answers[i];
    }
    const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
    return explicitServerSettings(vscode.workspace.getConfiguration(SECTION, scope));
  });
};

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed';

const SHOW_LOG = 'Show Log';
const OPEN_SETTINGS = 'Open Settings';
const INSTALL = 'Install with pip';
const RESTART = 'Restart Server';

interface RunResult {
  code: number | null;
  error?: Error;
  stderr: string;
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private selector: DocumentFilter[] = [];
  private readonly restarts = new RestartPolicy();
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  private readonly clientEmitter = new vscode.EventEmitter<LanguageClient>();
  private currentState: ServerState = 'stopped';
  /** Restarts the server when the Python extension's interpreter, which it runs on, changes. */
  private interpreterWatch: vscode.Disposable | undefined;
  private starting: Promise<void> | undefined;
  /** Why the server is not running, for the status bar's tooltip. */
  failure: string | undefined;

  readonly onDidChangeState = this.stateEmitter.event;
  /** `tokenline/status` notifications, with `uri` already in VS Code's form. */
  readonly onDidReceiveStatus = this.statusEmitter.event;
  /** A new client has started (used to refresh semantic tokens after a toggle). */
  readonly onDidStartClient = this.clientEmitter.event;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly middleware: Middleware,
  ) {}

  get state(): ServerState {
    return this.currentState;
  }

  get languageClient(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** Whether Tokenline attaches to the document (setting `tokenline.languages`). */
  attaches(document: vscode.TextDocument): boolean {
    return this.selector.length > 0 && vscode.languages.match(this.selector, document) > 0;
  }

  private setState(s: ServerState, failure?: string): void {
    this.currentState = s;
    this.failure = failure;
    this.stateEmitter.fire(s);
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    this.restarts.reset();
    await this.start();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.dispose(5000);
      } catch (err) {
        this.log.warn(`Stopping the server: ${String(err)}`);
      }
    }
    this.setState('stopped');
  }

  /** Sends the server's settings after a change of one of them. */
  sendSettings(): void {
    const c = this.languageClient;
    if (c) {
      const settings = explicitServerSettings(vscode.workspace.getConfiguration(SECTION));
      void c.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: settings } });
    }
  }

  async request<R>(method: string, params: object, token?: vscode.CancellationToken): Promise<R> {
    const c = this.languageClient;
    if (!c) {
      throw new Error(this.failure ?? 'the Tokenline server is not running');
    }
    return token ? c.sendRequest<R>(method, params, token) : c.sendRequest<R>(method, params);
  }

  asProtocolUri(uri: vscode.Uri): string {
    return this.client ? this.client.code2ProtocolConverter.asUri(uri) : uri.toString();
  }

  private async doStart(): Promise<void> {
    this.setState('starting');
    const folder = vscode.workspace.workspaceFolders?.[0];
    const settings = readSettings(vscode.workspace.getConfiguration(SECTION, folder?.uri));
    this.selector = documentSelector(settings.languages);
    const fromExtension =
      settings.serverCommand.length === 0 && !settings.python
        ? await selectedInterpreter(folder?.uri, this.log)
        : undefined;
    const launch = resolveLaunch({
      serverCommand: settings.serverCommand,
      python: settings.python,
      pythonFromExtension: fromExtension,
      platform: process.platform,
      home: os.homedir(),
      workspaceFolder: folder?.uri.fsPath,
    });
    this.log.info(`Server command (from ${describeSource(launch)}): ${shellQuote([launch.command, ...launch.args])}`);
    if (launch.source === 'python-extension' && !this.interpreterWatch) {
      this.interpreterWatch = await onDidChangeInterpreter(() => {
        if (this.currentState !== 'stopped') {
          this.log.info("The Python extension's interpreter changed; restarting the server.");
          void this.restart();
        }
      }, this.log);
    }

    if (launch.python && !(await this.checkImportable(launch))) {
      return;
    }

    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: this.selector,
      // Only what the user set: the project configuration fills the rest on the server.
      initializationOptions: explicitServerSettings(vscode.workspace.getConfiguration(SECTION, folder?.uri)),
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: { ...this.middleware, workspace: { configuration: answerConfiguration } },
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue }),
        closed: (): CloseHandlerResult => this.onClosed(),
      },
    };
    const client = new LanguageClient('tokenline', 'Tokenline', serverOptions, clientOptions);
    client.onNotification(STATUS, (s: Status) => {
      this.statusEmitter.fire({ ...s, uri: client.protocol2CodeConverter.asUri(s.uri).toString() });
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) {
        return;
      }
      if (e.newState === State.Running) {
        this.setState('running');
        this.clientEmitter.fire(client);
      } else if (e.newState === State.Starting) {
        this.setState('starting');
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      if (this.client === client) {
        this.client = undefined;
      }
      const why = `the language server did not start (${shellQuote([launch.command, ...launch.args])}): ${errorText(err)}`;
      this.log.error(`Tokenline: ${why}`);
      this.setState('failed', why);
      this.notify(`Tokenline: ${why}. Check ${describeSource(launch)}.`, [SHOW_LOG, OPEN_SETTINGS]);
    }
  }

  private onClosed(): CloseHandlerResult {
    if (this.restarts.shouldRestart(Date.now())) {
      this.log.warn(`The server stopped; restarting it (${this.restarts.recentCrashes} in the last minutes).`);
      return { action: CloseAction.Restart, handled: true };
    }
    const why = `the language server stopped ${this.restarts.recentCrashes} times in 3 minutes and is not restarted again`;
    this.log.error(`Tokenline: ${why}.`);
    this.setState('failed', why);
    this.notify(`Tokenline: ${why}. The log says why.`, [SHOW_LOG, RESTART]);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** True when `tokenline` imports in the launch's interpreter; else says so and offers pip. */
  private async checkImportable(launch: Launch): Promise<boolean> {
    const python = launch.python!;
    const args = importCheckArgs();
    this.log.info(`Checking the server package: ${shellQuote([python, ...args])}`);
    const r = await this.run(python, args, 60_000);
    if (r.code === 0) {
      return true;
    }
    if (r.error) {
      const why = `cannot run the Python interpreter ${python} (${describeSource(launch)}): ${r.error.message}`;
      this.log.error(`Tokenline: ${why}`);
      this.setState('failed', why);
      this.notify(
        `Tokenline: ${why}. Set tokenline.python to a Python 3 interpreter, or tokenline.server.command.`,
        [OPEN_SETTINGS, SHOW_LOG],
      );
      return false;
    }
    const why = `the Python package tokenline is not importable by ${python} (${describeSource(launch)})`;
    this.log.error(`Tokenline: ${why}:\n${r.stderr.trim()}`);
    this.setState('failed', why);
    this.notify(`Tokenline: ${why}. Install it into that interpreter?`, [INSTALL, OPEN_SETTINGS, SHOW_LOG], python);
    return false;
  }

  private notify(message: string, actions: string[], python?: string): void {
    void vscode.window.showErrorMessage(message, ...actions).then(async (choice) => {
      switch (choice) {
        case SHOW_LOG:
          this.log.show(true);
          break;
        case OPEN_SETTINGS:
          await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:tokenline.tokenline');
          break;
        case RESTART:
          await this.restart();
          break;
        case INSTALL:
          if (python) {
            await this.pipInstall(python);
          }
          break;
      }
    });
  }

  /** `python -m pip install tokenline`, its output in the log; on success the server starts. */
  async pipInstall(python: string): Promise<void> {
    const args = pipInstallArgs();
    this.log.info(`Running: ${shellQuote([python, ...args])}`);
    this.log.show(true);
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Tokenline: installing tokenline with pip…', cancellable: true },
      (_p, token) => this.run(python, args, 15 * 60_000, token, true),
    );
    if (r.code === 0) {
      this.log.info('pip install finished; starting the server.');
      await this.restart();
      return;
    }
    const why = r.error ? r.error.message : `exit code ${r.code}`;
    this.log.error(`pip install failed: ${why}`);
    this.notify(`Tokenline: pip install into ${python} failed (${why}). The log has pip's output.`, [SHOW_LOG, OPEN_SETTINGS]);
  }

  /** Runs a process to its end; with `stream`, its output lines go to the log as they come. */
  private run(
    command: string,
    args: string[],
    timeoutMs: number,
    token?: vscode.CancellationToken,
    stream = false,
  ): Promise<RunResult> {
    return new Promise((resolve) => {
      let stderr = '';
      let settled = false;
      const done = (r: RunResult) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          cancel?.dispose();
          resolve(r);
        }
      };
      const child = spawn(command, args, { env: { ...process.env, PYTHONUNBUFFERED: '1' } });
      const timer = setTimeout(() => {
        child.kill();
        done({ code: null, error: new Error(`timed out after ${timeoutMs / 1000} s`), stderr });
      }, timeoutMs);
      const cancel = token?.onCancellationRequested(() => {
        child.kill();
        done({ code: null, error: new Error('cancelled'), stderr });
      });
      child.stdout.on('data', (d: Buffer) => stream && this.log.info(d.toString().trimEnd()));
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stream) {
          this.log.warn(d.toString().trimEnd());
        }
      });
      child.on('error', (error) => done({ code: null, error, stderr }));
      child.on('close', (code) => done({ code, stderr }));
    });
  }

  dispose(): void {
    this.interpreterWatch?.dispose();
    void this.stop();
    this.stateEmitter.dispose();
    this.statusEmitter.dispose();
    this.clientEmitter.dispose();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
