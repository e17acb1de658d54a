// What the two doc-snippet tests share (not a test file itself: no .test.
// in its name). scripts/doc_snippets.py finds the JavaScript and TypeScript
// blocks of the repository's markdown and writes each as a module, with its
// markdown line numbers; here each runs as an ES module against this
// package, imported by its name ('ratekeeper') as a user's code does, and
// all are type-checked by tsc against the committed declarations.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const extractor = path.join(pkg, '..', 'scripts', 'doc_snippets.py');
const tsc = path.join(pkg, 'node_modules', '.bin', 'tsc');

/**
 * Writes the blocks (those that need a Redis when `redisUrl` is given, pointed
 * at it; the others otherwise) into a new folder whose node_modules/ratekeeper
 * is this package. Returns the folder, its modules, and `remove()`.
 * @param {{ redisUrl?: string }} [options]
 */
export function extractSnippets({ redisUrl } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ratekeeper-doc-snippets-'));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(pkg, path.join(dir, 'node_modules', 'ratekeeper'), 'dir');
  for (const lang of ['js', 'ts']) {
    const args = [extractor, 'extract', lang, dir, ...(redisUrl ? ['--redis', redisUrl] : [])];
    const done = spawnSync('python3', args, { encoding: 'utf8' });
    assert.equal(done.status, 0, `scripts/doc_snippets.py extract ${lang}: ${done.stderr}${done.error ?? ''}`);
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.mjs') || f.endsWith('.mts'));
  return { dir, files, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs one JavaScript block; fails with its output unless it exits 0. */
export function runSnippet(dir, file) {
  const done = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(done.status, 0, `${file} (its lines are the markdown file's) failed:\n${done.stderr}${done.stdout}`);
}

/** tsc on every block, JavaScript (checkJs) and TypeScript, with the package's declarations. */
export function typeCheck(dir) {
  const compilerOptions = {
    noEmit: true,
    strict: true,
    allowJs: true,
    checkJs: true,
    module: 'node16',
    moduleResolution: 'node16',
    target: 'es2022',
    types: [],
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mjs', '*.mts'] }));
  const done = spawnSync(tsc, ['-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
  assert.equal(done.status, 0, `tsc on the markdown's blocks (lines are the markdown file's):\n${done.stdout}${done.stderr}`);
}
