// The package against ratekeeper-core's registry of the algorithms, as the
// vector generator writes it (tests/conformance/algorithms.json): every
// registered algorithm is a class of both entry points, its options are the
// registry's parameters in camelCase (a duration as `…Ms` or `…Micros`),
// and the declarations a TypeScript user reads say so — the options type of
// each class, and the algorithm names a composite's or keyed limiter's
// `LimitOptions` takes. (The conformance vectors check what they decide.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import * as esm from '../index.mjs';

const require = createRequire(import.meta.url);
const rk = require('..');
const native = require('../lib/binding.js');

const read = (path) => readFileSync(new URL(path, import.meta.url), 'utf8');
const registry = JSON.parse(read('../../tests/conformance/algorithms.json')).algorithms;

/** `snake_case` → `camelCase`. */
const camel = (snake) => snake.replace(/_(.)/g, (_, c) => c.toUpperCase());

/**
 * An algorithm's option names and the type each is declared with, in order:
 * a parameter with a default in the registry is optional.
 */
function options(algorithm) {
  return algorithm.parameters.flatMap(({ name, kind, default: fallback }) => {
    const key = camel(name);
    if (kind === 'duration') {
      return [
        [`${key}Ms`, '?: number | undefined'],
        [`${key}Micros`, '?: number | bigint | undefined'],
      ];
    }
    const type = kind === 'rate' ? 'number' : 'number | bigint';
    return [[key, fallback === undefined ? `: ${type}` : `?: ${type} | undefined`]];
  });
}

/** Options that make a limiter of `algorithm`: 1 of every count and rate, 1 s of every duration. */
function sample(algorithm) {
  return Object.fromEntries(
    algorithm.parameters.map(({ name, kind }) => (kind === 'duration' ? [`${camel(name)}Ms`, 1000] : [camel(name), 1])),
  );
}

/** The properties of the type alias `name` in a declaration file, each as `key` and `?: type` or `: type`. */
function typeAlias(declarations, name) {
  const body = declarations.match(new RegExp(`^export type ${name} = \\{\\n([\\s\\S]*?)^\\};`, 'm'));
  assert.ok(body, `no type ${name}`);
  return [...body[1].matchAll(/^ {4}(\w+)(\??: [^;]+);$/gm)].map((m) => [m[1], m[2]]);
}

test('limiterKeys() is the registry in camelCase', () => {
  const expected = Object.fromEntries(registry.map((a) => [camel(a.wire_name), options(a).map(([key]) => key)]));
  assert.deepEqual(native.limiterKeys(), expected);
});

test('every registered algorithm is a class of both entry points', () => {
  for (const algorithm of registry) {
    const name = algorithm.display_name;
    const Class = rk[name];
    assert.equal(typeof Class, 'function', `no class ${name}`);
    assert.equal(esm[name], Class, name);
    assert.ok(Class.prototype instanceof rk.AdmissionLimiter, name);
    const clock = new rk.ManualClock();
    const limiter = new Class({ ...sample(algorithm), clock });
    assert.equal(Object.prototype.toString.call(limiter), `[object ${name}]`);
    assert.equal(limiter.check().allowed, true, name);
    const part = { algorithm: camel(algorithm.wire_name), ...sample(algorithm) };
    assert.equal(new rk.CompositeLimiter([part], { clock }).check().allowed, true, name);
  }
});

test("each class's options type declares the registry's parameters", () => {
  const declarations = read('../lib/admission.d.ts');
  for (const algorithm of registry) {
    const name = algorithm.display_name;
    const constructor = declarations.match(
      new RegExp(`^export class ${name} extends AdmissionLimiter \\{[\\s\\S]*?constructor\\(options: (\\w+)\\);`, 'm'),
    );
    assert.ok(constructor, `admission.d.ts has no class ${name} with a constructor(options)`);
    const declared = typeAlias(declarations, constructor[1]);
    assert.deepEqual(declared, [...options(algorithm), ['clock', '?: native.ManualClock | undefined']], name);
  }
});

test('LimitOptions takes every algorithm, with its class options', () => {
  const admission = read('../lib/admission.d.ts');
  const composite = read('../lib/composite.d.ts');
  const union = composite.match(/^export type LimitOptions = ([\s\S]*?\));$/m);
  assert.ok(union, 'composite.d.ts has no LimitOptions');
  const members = [...union[1].matchAll(/algorithm: ([^;]+);\n\} & Omit<import\("\.\/admission\.js"\)\.(\w+), "clock">/g)];
  const typeOf = new Map();
  for (const [, names, type] of members) {
    for (const [, name] of names.matchAll(/"(\w+)"/g)) typeOf.set(name, type);
  }
  assert.deepEqual([...typeOf.keys()].sort(), registry.map((a) => camel(a.wire_name)).sort());
  for (const algorithm of registry) {
    const constructor = admission.match(
      new RegExp(`^export class ${algorithm.display_name} extends[\\s\\S]*?constructor\\(options: (\\w+)\\);`, 'm'),
    );
    assert.equal(typeOf.get(camel(algorithm.wire_name)), constructor?.[1], algorithm.display_name);
  }
});

test('the entry points declare every class', () => {
  for (const file of ['../index.d.ts', '../index.d.mts']) {
    const exported = read(file).match(/^export \{([^}]*)\}/m);
    assert.ok(exported, `${file} has no export list`);
    const names = exported[1].split(',').map((n) => n.trim());
    for (const algorithm of registry) assert.ok(names.includes(algorithm.display_name), `${file}: ${algorithm.display_name}`);
  }
});
