// Completes package-lock.json with the other platforms' optional packages.
//
//   node scripts/complete-lockfile.mjs      (after any `npm install` that rewrote the lockfile)
//
// napi-rs's CLI depends on native packages (@napi-rs/lzma, tar, wasm-tools)
// that list one optional package per platform. A registry that serves only
// this machine's platform makes npm leave the others out of
// package-lock.json, and `npm ci` then refuses that lockfile as out of sync
// with package.json ("Missing: … from lock file"). This adds each missing
// one back as npm writes a package for another platform: its version and
// the os/cpu/libc it needs, marked optional, so that `npm ci` skips it on
// any other machine and installs it on its own (where the registry has it).
// It changes nothing npm resolved, and does nothing to a complete lockfile.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

/** napi-rs's platform suffixes: os, cpu, libc. */
const PLATFORM = /-(android|darwin|freebsd|linux|win32)-(arm64|arm|x64|ia32|ppc64|riscv64|s390x|universal)(?:-(gnu|gnueabihf|musl|msvc|eabi|ohos))?$/;
const WASM = /-wasm32-wasi$/;

const added = [];
for (const entry of Object.values(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (key in packages) continue;
    let needs;
    const m = PLATFORM.exec(name);
    if (m) {
      const [, os, cpu, abi] = m;
      needs = { cpu: [cpu === 'universal' ? 'x64' : cpu] };
      if (abi === 'gnu' || abi === 'gnueabihf') needs.libc = ['glibc'];
      if (abi === 'musl') needs.libc = ['musl'];
      needs.os = [abi === 'ohos' ? 'openharmony' : os];
    } else if (WASM.test(name)) {
      needs = { cpu: ['wasm32'] };
    } else {
      throw new Error(`${name}: an optional package for no platform I know; install it from a full registry`);
    }
    packages[key] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...needs };
    added.push(name);
  }
}
if (added.length > 0) {
  lock.packages = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
  );
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(`complete-lockfile: ${added.length} optional package(s) for other platforms added`);
