// What the Redis tests share (not a test file itself: no .test. in its
// name): the Redis that tests/redis/with-redis started, names no other run
// uses, redis-cli, and private servers a test may kill.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The Redis tests/redis/with-redis started. Never skipped: missing, it fails. */
export function redisUrl() {
  const url = process.env.RATEKEEPER_REDIS_URL;
  if (!url) throw new Error('RATEKEEPER_REDIS_URL is not set: run under tests/redis/with-redis (npm run test:redis does)');
  return url;
}

/** The cluster nodes tests/redis/with-redis --cluster started. */
export function clusterUrls() {
  const nodes = process.env.RATEKEEPER_REDIS_CLUSTER;
  if (!nodes) {
    throw new Error(
      'RATEKEEPER_REDIS_CLUSTER is not set: run under tests/redis/with-redis --cluster (npm run test:redis-cluster does)',
    );
  }
  return nodes.split(',');
}

let names = 0;
/** A limiter or group name no other test or run uses. */
export function unique(label) {
  return `node-test:${label}:${process.pid}:${Date.now()}:${names++}`;
}

/** `redis-cli -u url ARGS…`: its output, trimmed; throws if it fails. */
export function cli(url, ...args) {
  const out = spawnSync('redis-cli', ['-u', url, ...args], { encoding: 'utf8', timeout: 10_000 });
  if (out.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${out.stderr || out.error}`);
  return out.stdout.trim();
}

/** How many times the server has run a script by its SHA (`EVALSHA`). */
export function evalshaCalls(url) {
  const stats = cli(url, 'INFO', 'commandstats');
  const line = stats.split('\n').find((l) => l.startsWith('cmdstat_evalsha:'));
  return line ? Number(/calls=(\d+)/.exec(line)[1]) : 0;
}

/** How many times the server has run `command` (`INFO commandstats`). */
export function commandCalls(url, command) {
  const stats = cli(url, 'INFO', 'commandstats');
  const line = stats.split('\n').find((l) => l.startsWith(`cmdstat_${command}:`));
  return line ? Number(/calls=(\d+)/.exec(line)[1]) : 0;
}

/** A free loopback port (below 55536: nothing here needs a cluster bus). */
export async function freePort() {
  for (;;) {
    const server = createServer();
    const port = await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server.address().port));
    });
    await new Promise((resolve) => server.close(resolve));
    if (port < 55536) return port;
  }
}

/**
 * A redis-server of this test's own, on a free port, that the test can
 * `kill()` (SIGKILL, as `kill -9`) and `start()` again on the same port,
 * or `freeze()` (SIGSTOP) and `thaw()`.
 * `stop()` kills it for good and removes its directory.
 */
export async function privateServer(...extra) {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'ratekeeper-node-redis-'));
  const url = `redis://127.0.0.1:${port}/`;
  let child;
  const server = {
    port,
    url,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
        { stdio: 'ignore' },
      );
      for (let i = 0; i < 200; i++) {
        const ping = spawnSync('redis-cli', ['-p', String(port), 'PING'], { encoding: 'utf8' });
        if (ping.stdout.trim() === 'PONG') return;
        await sleep(25);
      }
      throw new Error(`redis-server on port ${port} did not start`);
    },
    /** Whether it runs (started and not killed since). */
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    /** Stops it (SIGSTOP): connections stay open, nothing is answered. */
    freeze() {
      child.kill('SIGSTOP');
    },
    /** Lets a frozen server go on (SIGCONT). */
    thaw() {
      if (server.running) child.kill('SIGCONT');
    },
    async stop() {
      server.thaw();
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Time `promise` takes to settle, in ms, with how it settled. */
export async function timed(promise) {
  const start = performance.now();
  try {
    return { value: await promise, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}
