// Names and shapes of Tokenline's own LSP messages, as docs/protocol.md fixes them. Plain types (no
// `vscode` import) so the pure modules and their tests can use them.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** A protocol Range from anything shaped like one (a `vscode.Range` or `vscode.Selection`). */
export function asRange(r: Range): Range {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

/**
 * `tokenline/willOpen` notification (client → server): an editor of the file opens. The server
 * counts the file from disk and sends its status (`version` null) before the didOpen comes.
 */
export const WILL_OPEN = 'tokenline/willOpen';
export interface WillOpenParams {
  uri: string;
}

/** `tokenline/status` notification (server → client), sent after each change. */
export const STATUS = 'tokenline/status';
export interface Status {
  uri: string;
  /** The document version counted; null for a file counted from disk before its didOpen. */
  version: number | null;
  tokens: number;
  contextWindow: number;
  model: string;
  compiled: boolean;
  /** The file's token budget from the project configuration, when one applies. */
  budget?: number;
  /** The glob of the project configuration that gave the budget. */
  budgetPattern?: string;
  /** The effective warnAt (the user's setting, else the project's, else 0.9). */
  warnAt?: number;
  /** Present while the model the settings name cannot be loaded: that setting (`model` is the one in use). */
  requestedModel?: string;
  /** Why it cannot be loaded. */
  modelError?: string;
  /** When the budget names a model: its name, its count of the document (null while it cannot be loaded), and why not. */
  budgetModel?: string;
  budgetTokens?: number | null;
  budgetError?: string;
  /** The document's counts under each of `tokenline.compareModels`, in the setting's order. */
  compare?: ModelCount[];
  /**
   * True while a model that re-encodes the whole text has not yet counted the newest changes:
   * `tokens` counts an earlier version (shown as `1,234… / 8,192 tokens`).
   */
  pending?: boolean;
  /** Present for a chat file: its conversations' totals. */
  chat?: ChatStatus;
}

/** `tokenline/status` `chat`: a chat file's conversations, as its model bills them. */
export interface ChatStatus {
  conversations: number;
  largest: number;
  total: number;
  /** True when the counts are OpenAI's published rule's estimate (tiktoken encodings). */
  estimate: boolean;
  /** `template`, `mistral`, `estimate` or `contents only`. */
  mode: string;
  /** Records that could not be counted (bad JSON or YAML, a template that raises). */
  errors: number;
  /** True while a JSONL file's records are still being counted (the numbers so far). */
  pending: boolean;
}

/** A document's count under one model (`tokenline/status` `compare`, `tokenline/compare`). */
export interface ModelCount {
  /** The model's name; the spec as written when it cannot be loaded. */
  model: string;
  /** null when the model cannot be loaded (then `error` says why). */
  tokens: number | null;
  /** The model's known window or the user's `tokenline.contextWindows`; null when unknown. */
  contextWindow: number | null;
  /** Tokens of the selection, each range encoded alone (0 without one). */
  selection: number | null;
  error?: string;
}

/** `tokenline/selection` notification (client → server): the editor's selection, counted under the compare models. */
export const SELECTION = 'tokenline/selection';
export type SelectionParams = CountParams;

/** `tokenline/compare`: the document's and the ranges' counts under its own model and each compare model. */
export const COMPARE = 'tokenline/compare';
export interface CompareParams {
  uri: string;
  /** Ranges to count; the last selection sent when absent. */
  ranges?: Range[];
}
export interface CompareResult {
  uri: string;
  version: number | null;
  document: ModelCount;
  compare: ModelCount[];
}

/** `tokenline/count`: for each range, the token count of its text encoded alone. */
export const COUNT = 'tokenline/count';
export interface CountParams {
  uri: string;
  ranges: Range[];
}
export interface CountResult {
  counts: number[];
}

/** `tokenline/ids`: for each range, the token ids of its text encoded alone. */
export const IDS = 'tokenline/ids';
export type IdsParams = CountParams;
export interface IdsResult {
  ids: number[][];
}

/** `tokenline/tokenAt`: the document token at a position, or null. */
export const TOKEN_AT = 'tokenline/tokenAt';
export interface TokenAtParams {
  uri: string;
  position: Position;
}
export interface TokenAt {
  index: number;
  total: number;
  id: number;
  /** Every token that shares a character with the one at the position (and its bytes, hex). */
  ids?: number[];
  bytes?: string[];
  piece: string;
  text: string;
  range: Range;
}

/**
 * `tokenline/models`: what can be used here. Bundled models, every encoding tiktoken knows
 * (`download` on those tiktoken fetches on first use), tokenizer files in the workspace folders,
 * then repos in the local Hugging Face cache (`kind` says which). With `uri`, `inUse` marks the
 * model that document is tokenized with.
 */
export const MODELS = 'tokenline/models';
export type ModelKind = 'bundled' | 'tiktoken' | 'workspace' | 'huggingface';
export interface ModelsParams {
  uri?: string;
}
export interface ModelInfo {
  label: string;
  /** The `tokenline.model` setting that loads it. */
  value: string;
  description?: string;
  kind?: ModelKind;
  /** The file it is read from ("" for an encoding not downloaded yet). */
  path?: string;
  download?: boolean;
  inUse?: boolean;
}
export interface ModelsResult {
  models: ModelInfo[];
}

/** Semantic token legend the server announces. */
export const TOKEN_TYPES = ['tokenlineA', 'tokenlineB'] as const;
export const TOKEN_MODIFIERS = ['whitespace', 'bytes', 'special', 'unknown'] as const;
