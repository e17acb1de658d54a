// The markdown's JavaScript blocks that need a Redis (```js redis), run
// against the one tests/redis/with-redis started and type-checked.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { extractSnippets, runSnippet, typeCheck } from '../doc-snippets.mjs';
import { redisUrl } from './support.mjs';

const snippets = extractSnippets({ redisUrl: redisUrl() });
after(() => snippets.remove());

test('the markdown has JavaScript blocks that need a Redis', () => {
  assert.ok(snippets.files.some((f) => f.endsWith('.mjs')), 'scripts/doc_snippets.py found none');
});

for (const file of snippets.files.filter((f) => f.endsWith('.mjs'))) {
  test(`${file} runs against the server`, () => runSnippet(snippets.dir, file));
}

test('every block type-checks against the declarations', () => typeCheck(snippets.dir));
