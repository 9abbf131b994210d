// The language ids a file will open with, guessed from its name before its document exists
// (openAhead.ts): from extensions' contributed languages and the user's files.associations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contributedLanguages, languagesOf } from '../src/fileLanguages';

const builtIn = contributedLanguages([
  { contributes: { languages: [{ id: 'markdown', extensions: ['.md', '.markdown', '.MKD'], aliases: ['Markdown'] }] } },
  { contributes: { languages: [{ id: 'plaintext', extensions: ['.txt'] }, { id: 'ignore', filenames: ['.gitignore'] }] } },
  { contributes: { languages: [{ id: 'jsonl', extensions: ['.jsonl'] }, { id: 'json', extensions: ['.json'] }] } },
  { contributes: { languages: [{ id: 'prompt', extensions: ['.prompt.md'] }] } },
  { contributes: { grammars: [] } },
  { contributes: { languages: 'not a list' } },
  { contributes: { languages: [{ extensions: ['.x'] }, null, { id: 'odd', extensions: [3, '.odd'], filenames: 'x' }] } },
  undefined,
]);

test('contributed languages keep only well-formed entries', () => {
  assert.deepEqual(
    builtIn.map((l) => l.id),
    ['markdown', 'plaintext', 'ignore', 'jsonl', 'json', 'prompt', 'odd'],
  );
  assert.deepEqual(builtIn.find((l) => l.id === 'odd'), { id: 'odd', extensions: ['.odd'], filenames: [] });
});

test('by extension, case-insensitively, every language that claims it', () => {
  assert.deepEqual(languagesOf('/w/notes/README.md', builtIn), ['markdown']);
  assert.deepEqual(languagesOf('/w/a.Mkd', builtIn), ['markdown']);
  assert.deepEqual(languagesOf('/w/system.prompt.md', builtIn), ['markdown', 'prompt']);
  assert.deepEqual(languagesOf('/w/data.jsonl', builtIn), ['jsonl']);
  assert.deepEqual(languagesOf('C:\\w\\notes.txt', builtIn), ['plaintext']);
});

test('by file name', () => {
  assert.deepEqual(languagesOf('/w/.gitignore', builtIn), ['ignore']);
  assert.deepEqual(languagesOf('/w/x.gitignore', builtIn), []);
});

test('nothing for a name no language claims', () => {
  assert.deepEqual(languagesOf('/w/photo.png', builtIn), []);
  assert.deepEqual(languagesOf('/w/md', builtIn), []);
});

test('files.associations wins, the most specific pattern first', () => {
  const assoc = { '*.md': 'plaintext', '*.prompt.md': 'prompt', 'NOTES': 'markdown', '**/docs/*.txt': 'markdown' };
  assert.deepEqual(languagesOf('/w/a.md', builtIn, assoc), ['plaintext']);
  assert.deepEqual(languagesOf('/w/a.prompt.md', builtIn, assoc), ['prompt']);
  assert.deepEqual(languagesOf('/w/notes', builtIn, assoc), ['markdown']);
  // Other globs are not read: the contributions decide.
  assert.deepEqual(languagesOf('/w/docs/a.txt', builtIn, assoc), ['plaintext']);
});
