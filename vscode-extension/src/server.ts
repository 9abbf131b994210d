// Starts, restarts and stops `tokenline serve` through vscode-languageclient, and says so when it
// cannot: no Python >= 3.10 for the bundled server, its install failing (with the command to run by
// hand), an interpreter set in tokenline.python that lacks `tokenline` (with an action that installs
// the bundled wheel into it), a server that keeps crashing. Never a silent failure, never an endless
// restart or reinstall loop: after a failure only the user starts it again.
import * as os from 'node:os';
import * as path from 'node:path';
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
import { Bundle, createEnv, EnvHost, EnvPaths, Failure, installArgs, QUIET_PIP, readBundle, readyEnv } from './bundledEnv';
import { DocumentFilter, documentSelector } from './documentSelector';
import { shellQuote } from './format';
import { runProcess, RunResult } from './process';
import { STATUS, Status, WILL_OPEN, WillOpenParams } from './protocol';
import { PipProxy, pipProxy } from './pipProxy';
import { choosePython, findPythons, offlineFor, why as failureText } from './pythonChoice';
import { onDidChangeInterpreter, selectedInterpreter } from './pythonInterpreter';
import { RestartPolicy } from './restartPolicy';
import { BundledPlan, describeSource, importCheckArgs, Launch, resolveLaunch, SERVE_ARGS } from './serverCommand';
import { ServerOutput } from './serverLog';
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
const RETRY = 'Retry';
const COPY = 'Copy Command';

/** Where the extension is installed and may keep its environment. */
export interface ExtensionPaths {
  /** The extension's folder (with bundled/). */
  extension: string;
  /** context.globalStorageUri.fsPath. */
  storage: string;
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private selector: DocumentFilter[] = [];
  private readonly restarts = new RestartPolicy();
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  private readonly clientEmitter = new vscode.EventEmitter<LanguageClient>();
  private currentState: ServerState = 'stopped';
  /** The client's output, each line at its level in the log. */
  private readonly output: ServerOutput;
  /** Restarts the server when the Python extension's interpreter, which it runs on, changes. */
  private interpreterWatch: vscode.Disposable | undefined;
  private starting: Promise<void> | undefined;
  /** Why the server is not running, for the status bar's tooltip. */
  failure: string | undefined;
  /** What a start is doing when it takes long (installing the bundled server), for the tooltip. */
  activity: string | undefined;

  readonly onDidChangeState = this.stateEmitter.event;
  /** `tokenline/status` notifications, with `uri` already in VS Code's form. */
  readonly onDidReceiveStatus = this.statusEmitter.event;
  /** A new client has started (used to refresh semantic tokens after a toggle). */
  readonly onDidStartClient = this.clientEmitter.event;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly middleware: Middleware,
    private readonly paths: ExtensionPaths,
  ) {
    this.output = new ServerOutput(log);
  }

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

  /** Whether Tokenline would attach to the file at `uri` opened with one of these languages. */
  wouldAttach(uri: vscode.Uri, languageIds: readonly string[]): boolean {
    // For a selector of schemes, languages and patterns, match reads only `uri` and `languageId`.
    return languageIds.some((languageId) => this.attaches({ uri, languageId } as vscode.TextDocument));
  }

  /** Tells the server that an editor of the file opens (`tokenline/willOpen`): it counts it now. */
  willOpen(uri: vscode.Uri): void {
    const c = this.languageClient;
    if (c) {
      const params: WillOpenParams = { uri: c.code2ProtocolConverter.asUri(uri) };
      void c.sendNotification(WILL_OPEN, params).catch(() => undefined);
    }
  }

  private setState(s: ServerState, failure?: string): void {
    this.currentState = s;
    this.failure = failure;
    this.activity = undefined;
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
      this.output.stopping = true;
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
    const plan = resolveLaunch({
      serverCommand: settings.serverCommand,
      python: settings.python,
      pythonFromExtension:
        settings.serverCommand.length === 0 && !settings.python
          ? await selectedInterpreter(folder?.uri, this.log)
          : undefined,
      platform: process.platform,
      home: os.homedir(),
      workspaceFolder: folder?.uri.fsPath,
    });
    if ('candidates' in plan && plan.fromPythonExtension && !this.interpreterWatch) {
      // The environment is made with the Python extension's interpreter: when the user picks
      // another one after a failure (an old Python), a restart tries it.
      this.interpreterWatch = await onDidChangeInterpreter(() => {
        if (this.currentState === 'failed') {
          this.log.info("The Python extension's interpreter changed; starting the server again.");
          void this.restart();
        }
      }, this.log);
    }
    const launch = 'candidates' in plan ? await this.bundledLaunch(plan) : plan;
    if (!launch) {
      return;
    }
    this.log.info(`Server command (from ${describeSource(launch)}): ${shellQuote([launch.command, ...launch.args])}`);
    if (launch.source === 'python-setting' && !(await this.checkImportable(launch))) {
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
      outputChannel: this.output,
      traceOutputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: { ...this.middleware, workspace: { configuration: answerConfiguration } },
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue }),
        closed: (): CloseHandlerResult => this.onClosed(),
      },
    };
    const client = new LanguageClient('tokenline', 'Tokenline', serverOptions, clientOptions);
    this.output.stopping = false;
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

  /**
   * The bundled server: its environment when it is ready, else made now (with a progress
   * notification and pip's output in the log). Undefined, with the reason shown, when it cannot be.
   */
  private async bundledLaunch(plan: BundledPlan): Promise<Launch | undefined> {
    const bundled = path.join(this.paths.extension, 'bundled');
    const bundle = readBundle(bundled);
    if (typeof bundle === 'string') {
      this.bundledFailed({ kind: 'no-bundle', message: `this build of the extension carries no server: ${bundle}` });
      return undefined;
    }
    const envPaths: EnvPaths = { storage: this.paths.storage, bundled, platform: process.platform };
    const host = this.envHost();
    let python = await readyEnv(envPaths, bundle, host);
    if (!python) {
      const found = await findPythons(plan.candidates, runProcess);
      if (typeof found === 'string') {
        this.bundledFailed({
          kind: 'no-python',
          message: `Tokenline needs Python 3.10 or newer to run its server and found none (${found})`,
        });
        return undefined;
      }
      if (found.length > 1) {
        this.log.info(`Pythons found: ${found.map((p) => `${p.executable} (${p.version}, ${p.from})`).join('; ')}.`);
      }
      const choice = choosePython(found, bundle);
      const base = choice.python;
      this.log.info(`Python for the server environment: ${base.executable} (Python ${base.version}, ${base.from}).`);
      // The proxy is named in the log when pip may reach the index.
      const installing = this.envHost(!choice.offline || choice.core.kind === 'compile');
      this.activity = 'installing its server (first start); the log shows the progress';
      this.stateEmitter.fire(this.currentState);
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Tokenline: installing its server', cancellable: true },
        (progress, token) =>
          createEnv(envPaths, bundle, choice, {
            ...installing,
            progress: (message) => progress.report({ message }),
            token,
          }),
      );
      if (!result.ok) {
        this.bundledFailed(result.failure);
        return undefined;
      }
      python = result.python;
    }
    return { command: python, args: [...SERVE_ARGS], source: 'bundled', python };
  }

  /** VS Code's http.proxy and http.proxyStrictSSL for pip; `say` logs what they change. */
  private pipProxy(say = false): PipProxy {
    const http = vscode.workspace.getConfiguration('http');
    const proxy = pipProxy({ proxy: http.get<string>('proxy') ?? '', strictSSL: http.get<boolean>('proxyStrictSSL') ?? true }, process.env);
    for (const note of say ? proxy.notes : []) {
      this.log.info(note);
    }
    return proxy;
  }

  /** How the extension runs pip: its output in the log (pip's errors and warnings at their level), VS Code's proxy. */
  private envHost(say = false): EnvHost {
    const proxy = this.pipProxy(say);
    return {
      run: runProcess,
      info: (m) => this.log.info(m),
      warn: (m) => this.log.warn(m),
      output: (text) => {
        for (const line of text.split(/\r?\n/)) {
          if (line.startsWith('ERROR:')) {
            this.log.error(line.trimEnd());
          } else if (line.startsWith('WARNING:')) {
            this.log.warn(line.trimEnd());
          } else if (line.trim()) {
            this.log.info(line.trimEnd());
          }
        }
      },
      progress: () => undefined,
      env: { ...process.env, ...proxy.env },
    };
  }

  /** Says why the bundled server cannot run and what to do; nothing retries by itself. */
  private bundledFailed(f: Failure): void {
    const why = f.kind === 'no-python' ? f.message : `Tokenline could not set up its server: ${f.message}`;
    this.log.error(why);
    this.setState('failed', f.message);
    switch (f.kind) {
      case 'no-bundle':
        this.notify(`${why}. Build the .vsix with npm run package, or set tokenline.python or tokenline.server.command.`, [
          OPEN_SETTINGS,
          SHOW_LOG,
        ]);
        break;
      case 'no-python':
        this.notify(
          `${why}. Install Python 3.10 or newer and select it in the Python extension or set tokenline.python, then Retry.`,
          [RETRY, OPEN_SETTINGS, SHOW_LOG],
        );
        break;
      default: {
        const hint =
          f.kind === 'install'
            ? ' pip needs the package index (check the network, a proxy in HTTPS_PROXY or pip.conf, PIP_INDEX_URL) and free disk space.'
            : '';
        this.log.error(`To set it up by hand, run:\n${f.command}`);
        this.notify(`${why}.${hint} To set it up by hand, run: ${f.command}`, [COPY, RETRY, SHOW_LOG], { command: f.command });
      }
    }
  }

  /** True when `tokenline` imports in tokenline.python; else says so and offers to install it. */
  private async checkImportable(launch: Launch): Promise<boolean> {
    const python = launch.python!;
    const args = importCheckArgs();
    this.log.info(`Checking the server package: ${shellQuote([python, ...args])}`);
    const r = await runProcess(python, args, { timeoutMs: 60_000 });
    if (r.code === 0) {
      return true;
    }
    if (r.error) {
      const why = `cannot run the Python interpreter ${python} (${describeSource(launch)}): ${r.error.message}`;
      this.log.error(`Tokenline: ${why}`);
      this.setState('failed', why);
      this.notify(
        `Tokenline: ${why}. Set tokenline.python to a Python 3 interpreter, or tokenline.server.command, or clear both to use the bundled server.`,
        [OPEN_SETTINGS, SHOW_LOG],
      );
      return false;
    }
    const why = `the Python package tokenline is not importable by ${python} (${describeSource(launch)})`;
    this.log.error(`Tokenline: ${why}:\n${r.stderr.trim()}`);
    this.setState('failed', why);
    this.notify(
      `Tokenline: ${why}. Install the bundled tokenline into that interpreter, or clear tokenline.python to use the bundled server?`,
      [INSTALL, OPEN_SETTINGS, SHOW_LOG],
      { python },
    );
    return false;
  }

  private notify(message: string, actions: string[], target: { python?: string; command?: string } = {}): void {
    void vscode.window.showErrorMessage(message, ...actions).then(async (choice) => {
      switch (choice) {
        case SHOW_LOG:
          this.log.show(true);
          break;
        case OPEN_SETTINGS:
          await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:tokenline.tokenline');
          break;
        case RESTART:
        case RETRY:
          await this.restart();
          break;
        case COPY:
          if (target.command) {
            await vscode.env.clipboard.writeText(target.command);
          }
          break;
        case INSTALL:
          if (target.python) {
            await this.pipInstall(target.python);
          }
          break;
      }
    });
  }

  /** The bundled wheel and its dependencies into `python` (tokenline.python); then a restart. */
  async pipInstall(python: string): Promise<void> {
    const bundled = path.join(this.paths.extension, 'bundled');
    const bundle: Bundle | string = readBundle(bundled);
    if (typeof bundle === 'string') {
      this.notify(`Tokenline: this build of the extension carries no server: ${bundle}.`, [SHOW_LOG]);
      return;
    }
    this.log.show(true);
    const host = this.envHost(true);
    // The dependencies from bundled/deps when the .vsix carries them for this Python.
    const found = await findPythons([{ command: python, from: 'tokenline.python' }], runProcess);
    const offline = typeof found !== 'string' && offlineFor(found[0], bundle);
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Tokenline: installing tokenline into ${python}…`, cancellable: true },
      async (_p, token) => {
        let last: RunResult | undefined;
        for (const args of installArgs(bundled, bundle.version, offline)) {
          this.log.info(`Running: ${shellQuote([python, ...args])}`);
          last = await runProcess(python, [...args, ...QUIET_PIP], { timeoutMs: 15 * 60_000, token, onOutput: host.output, env: host.env });
          if (last.code !== 0) {
            break;
          }
        }
        return last!;
      },
    );
    if (r.code === 0) {
      this.log.info('pip install finished; starting the server.');
      await this.restart();
      return;
    }
    const why = failureText(r);
    this.log.error(`pip install failed: ${why}`);
    this.notify(`Tokenline: pip install into ${python} failed (${why}). The log has pip's output.`, [SHOW_LOG, OPEN_SETTINGS]);
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
