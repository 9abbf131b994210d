// Runs a process to its end: exit code, output, a time limit and cancellation. No `vscode`
// import (a cancellation token is anything with onCancellationRequested), so the modules that
// use it are unit-tested with a fake runner instead.
import { spawn } from 'node:child_process';

export interface RunResult {
  /** Exit code; null when the process could not start, timed out or was cancelled. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why there is no exit code: ENOENT, the time limit, cancellation. */
  error?: Error;
}

export interface Cancellation {
  onCancellationRequested(listener: () => void): { dispose(): void };
}

export interface RunOptions {
  timeoutMs: number;
  token?: Cancellation;
  /** Each chunk of output as it comes (stderr: true for the error stream). */
  onOutput?: (text: string, stderr: boolean) => void;
  env?: NodeJS.ProcessEnv;
}

export type Runner = (command: string, args: readonly string[], options: RunOptions) => Promise<RunResult>;

export const runProcess: Runner = (command, args, options) =>
  new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (r: Omit<RunResult, 'stdout' | 'stderr'>) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        cancel?.dispose();
        resolve({ ...r, stdout, stderr });
      }
    };
    const child = spawn(command, [...args], {
      env: { ...(options.env ?? process.env), PYTHONUNBUFFERED: '1' },
      windowsHide: true,
    });
    const timer = setTimeout(() => {
      child.kill();
      done({ code: null, error: new Error(`timed out after ${Math.round(options.timeoutMs / 1000)} s`) });
    }, options.timeoutMs);
    const cancel = options.token?.onCancellationRequested(() => {
      child.kill();
      done({ code: null, error: new Error('cancelled') });
    });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      options.onOutput?.(d.toString(), false);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      options.onOutput?.(d.toString(), true);
    });
    child.on('error', (error) => done({ code: null, error }));
    child.on('close', (code) => done({ code }));
  });
