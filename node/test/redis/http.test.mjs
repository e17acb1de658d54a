// The HTTP middleware with a limit shared through Redis: two server
// processes, one limit (tests/redis/with-redis).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { unique } from './support.mjs';

const script = fileURLToPath(new URL('./http-server.mjs', import.meta.url));
const children = [];
after(() => {
  for (const child of children) child.stdin.end();
});

/** A server process limited by `limit` under `name`: its URL. */
async function server(name, limit) {
  const child = spawn(process.execPath, [script, name, limit], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return `http://127.0.0.1:${Number(line)}/`;
}

test('a Redis-backed limit holds across two server processes', async () => {
  const name = unique('http');
  const urls = await Promise.all([server(name, '30/hour'), server(name, '30/hour')]);
  // Per key: 6 concurrent clients on each server, 5 requests each = 60 for a limit of 30.
  for (const key of ['alice', 'bob']) {
    const admitted = new Map(urls.map((u) => [u, 0]));
    await Promise.all(
      urls.flatMap((url) =>
        Array.from({ length: 6 }, async () => {
          for (let i = 0; i < 5; i++) {
            const response = await fetch(url, { headers: { 'x-client': key } });
            const body = await response.json();
            assert.equal(body.allowed, response.status === 200);
            if (response.status === 200) admitted.set(url, admitted.get(url) + 1);
          }
        }),
      ),
    );
    const counts = [...admitted.values()];
    // Each server alone would admit 30 of its 30 requests.
    assert.equal(counts[0] + counts[1], 30, `admitted per server: ${counts}`);
  }
});
