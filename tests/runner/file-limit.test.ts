import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/config.js';
import { detectTestCommand } from '../../src/runner/detect.js';
import { fileLimitArguments } from '../../src/runner/file-limit.js';
import { makeRepo } from '../helpers/git-repo.js';

/**
 * Which detected test commands the trusted runs may limit to the Player's test files, and how: a
 * project with that package.json is detected as the server would, then asked for the arguments.
 */
async function limitFor(script: string, extra: Record<string, string> = {}) {
  const repo = makeRepo({
    'package.json': JSON.stringify({ scripts: { test: script } }),
    ...extra,
  });
  try {
    const command = await detectTestCommand(repo.dir, defaultConfig());
    return fileLimitArguments(command)?.(['test/a.test.js']);
  } finally {
    repo.remove();
  }
}

describe('limiting a run to test files', () => {
  it.each([
    ['vitest run', ['./test/a.test.js']],
    ['NODE_ENV=test vitest run --coverage', ['./test/a.test.js']],
    // jest would read a file name as a regular expression (`.` matches any character).
    ['jest --ci', ['--runTestsByPath', 'test/a.test.js']],
    ['npx jest', ['--runTestsByPath', 'test/a.test.js']],
    // Its ids name no file: the trusted runs limit it only where that does not matter.
    ['node --test', ['./test/a.test.js']],
    ['node --test --test-concurrency=2', ['./test/a.test.js']],
  ])('limits %s', async (script, args) => {
    expect(await limitFor(script)).toEqual(args);
  });

  it.each([
    // Ids without the file name: of these only node's own runner is limited (see above).
    'mocha',
    'ava',
    'tape test/*.js',
    // Appended arguments reach only the last command; the first runs tests of its own.
    'tsc && jest',
    'vitest run --project unit; vitest run --project e2e',
    'jest | tee out.txt',
  ])('runs the whole suite for %s', async (script) => {
    expect(await limitFor(script)).toBeUndefined();
  });

  it('limits pytest by file arguments that cannot be read as options', async () => {
    const repo = makeRepo({ 'pytest.ini': '[pytest]\n' });
    try {
      const command = await detectTestCommand(repo.dir, defaultConfig());
      expect(fileLimitArguments(command)?.(['tests/test_a.py'])).toEqual(['./tests/test_a.py']);
    } finally {
      repo.remove();
    }
  });
});
