// The language client's output channel, routed by level into the Tokenline log. The client writes
// three things there: the server's stderr (Python logging: "2026-11-24 08:00:00,123 ERROR
// tokenline.server: …", a traceback's lines after it), its own messages ("[Error - 08:00:00]
// Server process exited with code 0.") and the protocol trace. Written to a LogOutputChannel as
// they are, every one of them is logged at [info]; here each line goes to the level it names, and
// a server that exits with code 0, or while the extension stops it, is not an error.
import type * as vscode from 'vscode';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const PYTHON_LEVELS: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };
const CLIENT_LEVELS: Record<string, Level> = { Trace: 'info', LSP: 'info', Debug: 'debug', Info: 'info', Warn: 'warn', Error: 'error' };
const PYTHON_LINE = /^(?:\d{4}-\d\d-\d\d[ T][\d:,.]+ )?(DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;
const CLIENT_LINE = /^\[(Trace|LSP|Debug|Info|Warn|Error)\s*- [^\]]*\] ?(.*)$/;
const EXIT_LINE = /^Server process exited with (code (-?\d+)|signal \w+)\.?$/;

/**
 * The level of one line and its text (without the timestamp the log adds again). A line that
 * names no level (a traceback, a message's data) continues the one before it: `previous`.
 */
export function classify(line: string, previous: Level, stopping = false): { level: Level; text: string } {
  const py = PYTHON_LINE.exec(line);
  if (py) {
    return { level: PYTHON_LEVELS[py[1]], text: py[2] };
  }
  const client = CLIENT_LINE.exec(line);
  if (client) {
    const exit = EXIT_LINE.exec(client[2]);
    if (exit && (exit[2] === '0' || stopping)) {
      return { level: 'info', text: client[2] };
    }
    return { level: CLIENT_LEVELS[client[1]], text: client[2] };
  }
  return { level: previous, text: line };
}

/** An OutputChannel for vscode-languageclient that writes each whole line at its level. */
export class ServerOutput implements vscode.OutputChannel {
  readonly name: string;
  /** The extension is stopping the server: its exit, whatever the code, is expected. */
  stopping = false;
  private partial = '';
  private level: Level = 'info';

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.name = log.name;
  }

  /** Server output, in chunks that may end mid-line. */
  append(value: string): void {
    const lines = (this.partial + value).split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      this.write(line);
    }
  }

  /** The client's own lines; the trace's "[LSP - time] " prefix comes through append() first. */
  appendLine(value: string): void {
    if (this.partial && !CLIENT_LINE.test(this.partial)) {
      this.write(this.partial);
      this.partial = '';
    }
    this.append(`${value}\n`);
  }

  replace(value: string): void {
    this.partial = '';
    this.log.replace(value);
  }

  clear(): void {
    this.partial = '';
    this.log.clear();
  }

  show(columnOrPreserveFocus?: unknown, preserveFocus?: boolean): void {
    this.log.show(typeof columnOrPreserveFocus === 'boolean' ? columnOrPreserveFocus : preserveFocus);
  }

  hide(): void {
    this.log.hide();
  }

  /** The log belongs to the extension, not to one client. */
  dispose(): void {
    if (this.partial) {
      this.write(this.partial);
      this.partial = '';
    }
  }

  private write(line: string): void {
    if (!line.trim()) {
      return;
    }
    const { level, text } = classify(line, this.level, this.stopping);
    this.level = level;
    this.log[level](text);
  }
}
