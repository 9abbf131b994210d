// The model picker's rows and placeholder, from the server's `tokenline/models` and the document's
// `tokenline/status`: a heading per kind, the model in use checked (what the server counts with,
// not what the setting asks for), tiktoken encodings still to download and a model that failed to
// load marked. Pure: no `vscode` import, so it is unit-tested on its own.
import type { ModelInfo, ModelKind, Status } from './protocol';

/** The picker's sections, by the `kind` the server gives each model. */
export const MODEL_GROUPS: Record<ModelKind, string> = {
  bundled: 'Bundled',
  tiktoken: 'tiktoken encodings',
  workspace: 'Tokenizer files in the workspace',
  huggingface: 'Hugging Face cache',
};

export interface ModelRow {
  /** Set on a heading row (a separator); such a row has no value. */
  heading?: string;
  label: string;
  description?: string;
  /** The `tokenline.model` setting the row stands for. */
  value?: string;
  inUse?: boolean;
}

/** One row per model under its kind's heading; `status` (the active document's) names a model
 * that failed to load. */
export function modelRows(models: readonly ModelInfo[], status?: Status): ModelRow[] {
  const rows: ModelRow[] = [];
  let group: string | undefined;
  for (const m of models) {
    const heading = MODEL_GROUPS[m.kind ?? 'bundled'] ?? 'Models';
    if (heading !== group) {
      rows.push({ heading, label: heading });
      group = heading;
    }
    rows.push({
      label: `${m.inUse ? '$(check) ' : ''}${m.label}`,
      description: rowDescription(m, status),
      value: m.value,
      inUse: m.inUse === true,
    });
  }
  return rows;
}

function rowDescription(m: ModelInfo, status?: Status): string | undefined {
  if (status?.modelError !== undefined && status.requestedModel === m.value) {
    return `$(warning) could not be loaded; choose it to try again`;
  }
  if (m.download) {
    return `$(cloud-download) ${m.description ?? 'downloaded on first use'}`;
  }
  return m.description;
}

/** What the picker says is in use: the status's model, the failed one beside it; without a
 * document, the setting. */
export function pickerPlaceholder(setting: string, status?: Status): string {
  if (!status) {
    return `Setting: ${setting || 'the bundled default'}`;
  }
  if (status.modelError !== undefined) {
    return `In use: ${status.model} (${status.requestedModel ?? 'the chosen model'} could not be loaded)`;
  }
  return `In use: ${status.model}`;
}
