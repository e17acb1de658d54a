// The markdown's JavaScript and TypeScript blocks (doc-snippets.mjs says
// how), but those that need a Redis: test/redis/doc-snippets.test.mjs.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { extractSnippets, runSnippet, typeCheck } from './doc-snippets.mjs';

const snippets = extractSnippets();
after(() => snippets.remove());

test('the markdown has JavaScript blocks to check', () => {
  assert.ok(snippets.files.some((f) => f.endsWith('.mjs')), 'scripts/doc_snippets.py found none');
});

for (const file of snippets.files.filter((f) => f.endsWith('.mjs'))) {
  test(`${file} runs`, () => runSnippet(snippets.dir, file));
}

test('every block type-checks against the declarations', () => typeCheck(snippets.dir));
