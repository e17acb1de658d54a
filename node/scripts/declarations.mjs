// The package's TypeScript declarations: generated, committed, and checked.
//
//   node scripts/declarations.mjs generate   (npm run build:types)
//   node scripts/declarations.mjs check      (npm run check:declarations)
//   node scripts/declarations.mjs check NAPI_BUILD_ARG...
//
// Two generators write them. napi-rs writes lib/binding.d.ts, the native
// module's, from the Rust source (`napi build --dts`, part of
// `npm run build:native`). tsc writes the others (index.d.ts, index.d.mts,
// lib/*.d.ts) from the JSDoc of the JavaScript beside them, which it also
// type-checks against lib/binding.d.ts.
//
// `generate` deletes tsc's previous output first: tsc resolves an import of
// './index.js' to an existing './index.d.ts', so a stale declaration would
// otherwise be read back as the source of the new one.
//
// `check` changes nothing: it builds both kinds into a temporary copy of the
// package and fails, printing a diff, if any committed declaration differs
// from what the current sources generate (or is missing, or is extra).
// Arguments after `check` go to its `napi build`: scripts/dist/node.sh
// --check-declarations passes the release build's (zig, its target folder),
// so that the check compiles what that build then reuses.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** The JavaScript sources tsc reads, and the declaration each one gets. */
function tscOutputs(dir) {
  const outputs = ['index.d.ts', 'index.d.mts'];
  for (const file of readdirSync(path.join(dir, 'lib')).sort()) {
    if (file.endsWith('.js') && file !== 'binding.js') outputs.push(`lib/${file.slice(0, -3)}.d.ts`);
  }
  for (const file of readdirSync(path.join(dir, 'lib', 'http')).sort()) {
    if (file.endsWith('.js')) outputs.push(`lib/http/${file.slice(0, -3)}.d.ts`);
  }
  return outputs;
}

function runTsc(dir) {
  for (const file of tscOutputs(dir)) rmSync(path.join(dir, file), { force: true });
  execFileSync(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' });
}

function check(napiArgs) {
  const work = mkdtempSync(path.join(tmpdir(), 'ratekeeper-declarations-'));
  try {
    for (const file of ['index.js', 'index.mjs', 'tsconfig.json', 'package.json']) {
      cpSync(path.join(root, file), path.join(work, file));
    }
    cpSync(path.join(root, 'lib'), path.join(work, 'lib'), {
      recursive: true,
      filter: (src) => !/\.(d\.ts|node)$/.test(src),
    });
    symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'dir');
    execFileSync(
      bin('napi'),
      [
        // The flags of package.json's build:native that change what cargo
        // builds or what napi writes, so that this reuses that build.
        'build',
        '--platform',
        '--strip',
        '--js', 'binding.js',
        '--manifest-path', path.join(root, '..', 'bindings', 'node', 'Cargo.toml'),
        '--package-json-path', path.join(work, 'package.json'),
        '--output-dir', path.join(work, 'lib'),
        '--dts', 'binding.d.ts',
        '--release',
        ...napiArgs,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    runTsc(work);

    const expected = ['lib/binding.d.ts', ...tscOutputs(work)];
    const committed = ['index.d.ts', 'index.d.mts', ...readdirSync(path.join(root, 'lib'))
      .filter((f) => f.endsWith('.d.ts')).map((f) => `lib/${f}`), ...readdirSync(path.join(root, 'lib', 'http'))
      .filter((f) => f.endsWith('.d.ts')).map((f) => `lib/http/${f}`)];
    let stale = 0;
    for (const file of new Set([...expected, ...committed])) {
      const mine = path.join(root, file);
      const fresh = path.join(work, file);
      if (!existsSync(fresh)) {
        console.error(`stale: ${file} is committed but no longer generated`);
        stale++;
      } else if (!existsSync(mine)) {
        console.error(`stale: ${file} is generated but missing`);
        stale++;
      } else if (readFileSync(mine, 'utf8') !== readFileSync(fresh, 'utf8')) {
        console.error(`stale: ${file} differs from what the sources generate:`);
        spawnSync('diff', ['-u', mine, fresh], { stdio: 'inherit' });
        stale++;
      }
    }
    if (stale > 0) {
      console.error(`${stale} declaration file(s) stale: run "npm run build" in node/ and commit the result`);
      process.exit(1);
    }
    console.log(`declarations up to date (${expected.length} files)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (mode === 'generate') runTsc(root);
else if (mode === 'check') check(process.argv.slice(3));
else {
  console.error('usage: node scripts/declarations.mjs generate | check [NAPI_BUILD_ARG...]');
  process.exit(2);
}
