// One version: the native module's `version()`, the package's, the
// workspace's (Cargo.toml, which every other version is derived from), and
// napi-rs's layout for the platform packages at that same version.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { version } from 'ratekeeper';

const node = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const pkg = readJson(path.join(node, 'package.json'));

/** The version in the workspace's `[workspace.package]` table. */
function workspaceVersion() {
  const cargo = readFileSync(path.join(node, '..', 'Cargo.toml'), 'utf8');
  const table = /^\[workspace\.package\]$([\s\S]*?)(?:^\[|(?![\s\S]))/m.exec(cargo);
  assert.ok(table, 'Cargo.toml has a [workspace.package] table');
  const found = /^version\s*=\s*"([^"]+)"/m.exec(table[1]);
  assert.ok(found, '[workspace.package] has a version');
  return found[1];
}

test('version() is the package version and the workspace version', () => {
  assert.match(version(), /^\d+\.\d+\.\d+/);
  assert.equal(version(), pkg.version);
  assert.equal(version(), workspaceVersion());
});

test('a platform package per napi target, each an optional dependency at the version', () => {
  const dirs = readdirSync(path.join(node, 'npm')).sort();
  const platforms = dirs.map((dir) => readJson(path.join(node, 'npm', dir, 'package.json')));
  assert.equal(dirs.length, pkg.napi.targets.length);
  for (const [i, platform] of platforms.entries()) {
    assert.equal(platform.name, `ratekeeper-${dirs[i]}`);
    assert.equal(platform.version, pkg.version, platform.name);
    assert.equal(platform.main, `ratekeeper.${dirs[i]}.node`);
    assert.deepEqual(platform.files, [platform.main, 'LICENSE-MIT', 'LICENSE-APACHE']);
  }
  assert.deepEqual(pkg.optionalDependencies, Object.fromEntries(platforms.map((p) => [p.name, pkg.version])));
});
