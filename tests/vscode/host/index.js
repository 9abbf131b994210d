// Runs inside VS Code's extension host (extensionTestsPath), with the `vscode` API and the
// Tokenline extension under development. It records what the API reports — diagnostics, the
// semantic-token legend and tokens, the toggle — into <workspace>/.tokenline-e2e/host-result.json;
// test_vscode_e2e.py asserts on it.
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const TIMEOUT_MS = 45000;

async function poll(what, fn, timeout = TIMEOUT_MS) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) {
      return last;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function decode(tokens, legend) {
  const out = [];
  if (!tokens) {
    return out;
  }
  const d = tokens.data;
  let line = 0;
  let ch = 0;
  for (let i = 0; i < d.length; i += 5) {
    line += d[i];
    ch = d[i] === 0 ? ch + d[i + 1] : d[i + 1];
    const mods = legend.tokenModifiers.filter((_, bit) => d[i + 4] & (1 << bit));
    out.push({ line, character: ch, length: d[i + 2], type: legend.tokenTypes[d[i + 3]], modifiers: mods });
  }
  return out;
}

async function semanticTokens(uri) {
  return vscode.commands.executeCommand('vscode.provideDocumentSemanticTokens', uri);
}

function diagnostics(uri) {
  return vscode.languages.getDiagnostics(uri).map((d) => ({
    severity: vscode.DiagnosticSeverity[d.severity],
    message: d.message,
    range: [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character],
  }));
}

exports.run = async function run() {
  const folder = vscode.workspace.workspaceFolders[0].uri;
  const files = JSON.parse(fs.readFileSync(path.join(folder.fsPath, '.tokenline-e2e', 'files.json'), 'utf8'));
  const result = { steps: {} };
  const step = async (name, fn) => {
    try {
      result.steps[name] = { ok: true, ...(await fn()) };
    } catch (err) {
      result.steps[name] = { ok: false, error: String((err && err.stack) || err) };
    }
  };

  const prompt = vscode.Uri.joinPath(folder, files.prompt);
  const big = vscode.Uri.joinPath(folder, files.big);

  await step('activation', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(prompt));
    const ext = await poll('the Tokenline extension', async () => vscode.extensions.getExtension('tokenline.tokenline'));
    await poll('activation', async () => ext.isActive);
    return { active: ext.isActive, extensionPath: ext.extensionPath };
  });

  await step('semanticTokens', async () => {
    const legend = await poll('a semantic-token legend', () =>
      vscode.commands.executeCommand('vscode.provideDocumentSemanticTokensLegend', prompt),
    );
    const tokens = await poll('semantic tokens', async () => {
      const t = await semanticTokens(prompt);
      return t && t.data.length > 0 ? t : undefined;
    });
    const doc = await vscode.workspace.openTextDocument(prompt);
    const decoded = decode(tokens, legend).map((t) => ({
      ...t,
      text: doc.lineAt(t.line).text.slice(t.character, t.character + t.length),
    }));
    const lines = [];
    for (let i = 0; i < Math.min(doc.lineCount, 12); i++) {
      lines.push(doc.lineAt(i).text);
    }
    return { legend, tokens: decoded, lines };
  });

  await step('diagnostics', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(big));
    const over = await poll('the over-the-window Error', async () => {
      const d = diagnostics(big);
      return d.length ? d : undefined;
    });
    const doc = await vscode.workspace.openTextDocument(big);
    const last = doc.lineAt(doc.lineCount - 1);
    return { big: over, prompt: diagnostics(prompt), bigEnd: [last.lineNumber, last.text.length] };
  });

  await step('toggle', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(prompt));
    await vscode.commands.executeCommand('tokenline.toggleBoundaries');
    const off = await poll('no semantic tokens after the toggle', async () => {
      const t = await semanticTokens(prompt);
      return t && t.data.length === 0 ? { count: 0 } : undefined;
    });
    const enabledAfterOff = vscode.workspace.getConfiguration('tokenline').get('boundaries.enabled');
    await vscode.commands.executeCommand('tokenline.toggleBoundaries');
    const on = await poll('semantic tokens after toggling back', async () => {
      const t = await semanticTokens(prompt);
      return t && t.data.length > 0 ? { count: t.data.length / 5 } : undefined;
    });
    return { off, on, enabledAfterOff };
  });

  await step('copyIds', async () => {
    // Two selections, the first word of line 0 and all of line 2 (which starts with the same
    // word): the clipboard gets one JSON array of ids per selection.
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(prompt));
    const word = editor.document.lineAt(0).text.split(' ')[0];
    const line = editor.document.lineAt(2);
    editor.selections = [new vscode.Selection(0, 0, 0, word.length), new vscode.Selection(line.range.start, line.range.end)];
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('tokenline.copyTokenIds');
    const text = await poll('token ids on the clipboard', async () => (await vscode.env.clipboard.readText()) || undefined, 15000);
    return { word, line: line.text, clipboard: text };
  });

  await step('commands', async () => {
    const all = await vscode.commands.getCommands(true);
    return { tokenline: all.filter((c) => c.startsWith('tokenline.')).sort() };
  });

  const out = path.join(folder.fsPath, '.tokenline-e2e', 'host-result.json');
  fs.writeFileSync(`${out}.tmp`, JSON.stringify(result));
  fs.renameSync(`${out}.tmp`, out);
};
