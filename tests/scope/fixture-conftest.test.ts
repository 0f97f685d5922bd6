import { describe, expect, it } from 'vitest';
import { isFixtureOnlyConftest } from '../../src/scope/fixture-conftest.js';

const FIXTURE = [
  '"""Fixtures for the shout tests."""',
  'import pytest',
  '',
  'WORDS = ["hi", "yo"]',
  '',
  '',
  '@pytest.fixture(scope="module")',
  'def words():',
  '    return list(WORDS)',
  '',
].join('\n');

describe('isFixtureOnlyConftest', () => {
  it('takes a conftest that only adds fixtures, constants and helpers', () => {
    expect(isFixtureOnlyConftest(FIXTURE)).toBe(true);
    expect(
      isFixtureOnlyConftest(
        `${FIXTURE}\n\nclass Box:\n    def __init__(self):\n        self.items = []\n`,
      ),
    ).toBe(true);
  });

  it.each([
    ['a hook', 'def pytest_runtest_makereport(item, call):\n    pass\n'],
    ['an autouse fixture', '@pytest.fixture(autouse=True)\ndef always():\n    yield\n'],
    [
      'a monkeypatching fixture',
      '@pytest.fixture\ndef fake(monkeypatch):\n    monkeypatch.setattr("app.text.slug", str)\n',
    ],
    [
      'a module attribute replaced',
      'import app.text\n\n\ndef helper():\n    app.text.slug = str\n',
    ],
    ['a module-level call', 'import app\napp.configure(debug=True)\n'],
    ['mock.patch', 'from unittest.mock import patch\n'],
    ['sys.modules', 'import sys\n\n\ndef f():\n    sys.modules["app"] = None\n'],
    ['another decorator', 'import functools\n\n\n@functools.cache\ndef f():\n    pass\n'],
  ])('keeps out %s', (_name, text) => {
    expect(isFixtureOnlyConftest(`import pytest\n\n${text}`)).toBe(false);
  });
});
