// package.json against the server's contract (docs/protocol.md) and the extension's own sources.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { documentSelector, isPattern } from '../src/documentSelector';
import { TOKEN_MODIFIERS, TOKEN_TYPES } from '../src/protocol';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const protocolDoc = path.join(root, '..', 'docs', 'protocol.md');

test('semantic token types and modifiers are the legend of docs/protocol.md', () => {
  const doc = fs.readFileSync(protocolDoc, 'utf8');
  const legend = /token types `(\[[^`]*\])`, modifiers\s*`(\[[^`]*\])`/.exec(doc);
  assert.ok(legend, 'docs/protocol.md states the legend');
  assert.deepEqual(JSON.parse(legend[1]), [...TOKEN_TYPES]);
  assert.deepEqual(JSON.parse(legend[2]), [...TOKEN_MODIFIERS]);
  assert.deepEqual(pkg.contributes.semanticTokenTypes.map((t: { id: string }) => t.id), [...TOKEN_TYPES]);
  assert.deepEqual(pkg.contributes.semanticTokenModifiers.map((t: { id: string }) => t.id), [...TOKEN_MODIFIERS]);
});

test('default colours for light, dark and both high-contrast themes, distinct for A and B', () => {
  const custom = pkg.contributes.configurationDefaults['editor.semanticTokenColorCustomizations'];
  for (const theme of ['[*Light*]', '[*Dark*]', '[Default High Contrast]', '[Default High Contrast Light]']) {
    const rules = custom[theme]?.rules;
    assert.ok(rules, `${theme} has rules`);
    assert.match(rules.tokenlineA, /^#[0-9a-f]{6}$/i);
    assert.match(rules.tokenlineB, /^#[0-9a-f]{6}$/i);
    assert.notEqual(rules.tokenlineA.toLowerCase(), rules.tokenlineB.toLowerCase());
  }
  // Other themes colour the two types through TextMate scopes they already style.
  assert.ok(pkg.contributes.semanticTokenScopes[0].scopes.tokenlineA);
  assert.ok(pkg.contributes.semanticTokenScopes[0].scopes.tokenlineB);
  // Semantic highlighting on for the default languages whatever the theme says, and nowhere else.
  for (const lang of ['markdown', 'plaintext', 'prompt']) {
    assert.equal(pkg.contributes.configurationDefaults[`[${lang}]`]['editor.semanticHighlighting.enabled'], true);
  }
});

test('commands in package.json are the ones the extension registers', () => {
  const src = fs.readFileSync(path.join(root, 'src', 'commands.ts'), 'utf8');
  const registered = [...src.matchAll(/reg\('([\w.]+)'/g)].map((m) => m[1]).sort();
  const declared = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(registered, declared);
  assert.ok(declared.includes('tokenline.toggleBoundaries'));
  const toggle = pkg.contributes.commands.find((c: { command: string }) => c.command === 'tokenline.toggleBoundaries');
  assert.equal(`${toggle.category}: ${toggle.title}`, 'Tokenline: Toggle Token Boundaries');
});

test('explicit activation for each default language and prompt file pattern', () => {
  const events: string[] = pkg.activationEvents;
  assert.ok(events.length > 0);
  for (const entry of pkg.contributes.configuration.properties['tokenline.languages'].default as string[]) {
    if (isPattern(entry)) {
      assert.ok(events.includes(`workspaceContains:${entry}`), `workspaceContains:${entry}`);
    } else {
      assert.ok(events.includes(`onLanguage:${entry}`), `onLanguage:${entry}`);
    }
  }
});

test('VS Code 1.100 is supported', () => {
  assert.equal(pkg.engines.vscode, '^1.100.0');
  assert.equal(pkg.devDependencies['@types/vscode'], '1.100.0');
});

test('document selector: language ids for files and untitled, patterns for files', () => {
  assert.deepEqual(documentSelector(['markdown', '**/*.prompt', 'markdown', ' ']), [
    { scheme: 'file', language: 'markdown' },
    { scheme: 'untitled', language: 'markdown' },
    { scheme: 'file', pattern: '**/*.prompt' },
  ]);
  assert.deepEqual(documentSelector(['*']), [{ scheme: 'file' }, { scheme: 'untitled' }]);
  assert.deepEqual(documentSelector([]), []);
  assert.equal(isPattern('plaintext'), false);
  assert.equal(isPattern('*.prompty'), true);
  assert.equal(isPattern('notes.txt'), true);
});

test('npm run package builds the universal .vsix and the linux-x64 one, which alone carries bundled/deps', () => {
  const steps = pkg.scripts.package.split(' && ');
  assert.equal(steps[0], 'npm run bundle-wheels');
  assert.match(steps[1], /^vsce package (?!.*--target)/);
  assert.equal(steps[2], 'npm run bundle-deps');
  assert.match(steps[3], /^vsce package --target linux-x64 --ignoreFile \.vscodeignore\.linux-x64 /);
  assert.equal(pkg.scripts['bundle-wheels'], 'node scripts/bundle-wheels.mjs');
  assert.equal(pkg.scripts['bundle-deps'], 'node scripts/bundle-deps.mjs');
  const lines = (f: string) => fs.readFileSync(path.join(root, f), 'utf8').split('\n');
  const universal = lines('.vscodeignore');
  for (const kept of ['!bundled/bundle.json', '!bundled/requirements.txt', '!bundled/wheels/**', '!bundled/sdist/**', '!bundled/pip/**']) {
    assert.ok(universal.includes(kept), `.vscodeignore keeps ${kept.slice(1)}`);
  }
  assert.ok(!universal.some((l) => l.startsWith('!bundled/deps') || l === '!bundled/**'), 'the universal .vsix carries no dependencies');
  assert.ok(lines('.vscodeignore.linux-x64').includes('!bundled/**'));
  // bundled/ is built, never committed.
  assert.ok(lines('.gitignore').includes('bundled/'));
});
