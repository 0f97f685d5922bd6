import assert from 'node:assert/strict';
import { test } from 'node:test';
import { greet } from '../src/greet.js';

test('greets by name', () => {
  assert.equal(greet('Ada'), 'Hello, Ada!');
});

test('rejects blank names', () => {
  for (const blank of [undefined, '', '   ', '\t\n']) {
    assert.throws(() => greet(blank), { name: 'TypeError', message: 'name is required' });
  }
});

test('trims names before greeting', () => {
  assert.equal(greet('  Ada  '), 'Hello, Ada!');
});
