import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';

/**
 * Start-up points, read from the runner's own configuration: a module the base's test script
 * preloads (`node -r`), though it sits in the package's published files, is the base's in the
 * trusted runs, and a change of the Player's to it is refused naming it; an unchanged jest setup
 * file around an honest change is approved. Through MCP, with the real runners.
 */
const openTask = layoutTasks();

const linkModules = (repo: { dir: string }) =>
  symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));
const SHOUT_TEST = linesOf(
  "const assert = require('node:assert/strict');",
  "const test = require('node:test');",
  "const { shout } = require('../app/shout.js');",
  '',
  "test('shouts', () => assert.equal(shout('ab'), 'AB!'));",
);

describe('start-up points from the runner configuration', () => {
  it('refuses a change to a module the test script preloads, naming it', async () => {
    const task = await openTask({
      base: {
        'package.json': JSON.stringify({
          files: ['app'],
          scripts: { test: 'node -r ./app/instrument.js --test' },
        }),
        'app/instrument.js': "globalThis.punctuation = '!';\n",
        'app/shout.js': 'exports.shout = (text) => text.toUpperCase() + globalThis.punctuation;\n',
        'test/shout.test.js': SHOUT_TEST,
      },
      player: {
        // Runs before every test: the broken shout is replaced by a working one, which no
        // assertion guard sees.
        'app/instrument.js': linesOf(
          "globalThis.punctuation = '!';",
          "require('./shout.js').shout = (text) => `${text.toUpperCase()}!`;",
        ),
        'app/shout.js': 'exports.shout = (text) => text + globalThis.punctuation;\n',
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toContain('start-up point changed: app/instrument.js');
    expect(refused.text).toContain('"file": "app/instrument.js"');
    // The trusted runs preloaded the base's copy: the broken shout is what the base test met.
    expect(refused.text).toMatch(/base test shouts passed at the base but failed/);
  }, 240_000);

  it('approves an honest change in a project with an unchanged jest setup file', async () => {
    const task = await openTask({
      base: {
        'package.json': JSON.stringify({
          scripts: { test: 'jest' },
          jest: { setupFiles: ['./test/setup.js'] },
        }),
        '.gitignore': 'node_modules/\n',
        'test/setup.js': "globalThis.punctuation = '!';\n",
        'app/shout.js': 'exports.shout = (text) => text.toUpperCase() + globalThis.punctuation;\n',
        'test/shout.test.js': linesOf(
          "const { shout } = require('../app/shout.js');",
          '',
          "test('shouts', () => expect(shout('ab')).toBe('AB!'));",
        ),
      },
      player: {
        'app/shout.js':
          'exports.shout = (text) => text.trim().toUpperCase() + globalThis.punctuation;\n',
        'test/trim.test.js': linesOf(
          "const { shout } = require('../app/shout.js');",
          '',
          "test('trims', () => expect(shout(' ab ')).toBe('AB!'));",
        ),
      },
      criterion: 'shout trims the text',
      evidence: [{ criterion: 'AC-001', test: 'trims' }],
      beforePin: linkModules,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({
      startup_changed: [],
      taken_from_player: ['app/shout.js'],
    });
  }, 240_000);
});
