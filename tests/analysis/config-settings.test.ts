import { beforeAll, describe, expect, it } from 'vitest';
import { extractConfigSettings } from '../../src/analysis/config-settings.js';
import { loadTypeScript } from '../../src/analysis/typescript-parser.js';

// The compiler is loaded lazily in the server; JS runner configs need it loaded before parsing.
beforeAll(() => loadTypeScript());

const code = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('extractConfigSettings', () => {
  it('reads the pytest tables of pyproject.toml, arrays across lines, and nothing else', () => {
    const text = code(
      '[project]',
      'name = "app"',
      'addopts = "not pytest"',
      '',
      '[tool.pytest.ini_options]',
      'minversion = "8.0"',
      'addopts = "-q -k \'not slow\'"  # keep quiet',
      'testpaths = [',
      '  "tests",  # unit',
      '  "integration",',
      ']',
      '',
      '[tool.pytest]',
      'python_files = ["check_*.py"]',
      '',
      '[[tool.other]]',
      'testpaths = ["nope"]',
    );
    expect(extractConfigSettings('pyproject.toml', text)).toEqual({
      'tool.pytest.ini_options.addopts': '"-q -k \'not slow\'"',
      'tool.pytest.ini_options.testpaths': '[ "tests", "integration", ]',
      'tool.pytest.python_files': '["check_*.py"]',
    });
  });

  it('reads INI sections with continuation lines: pytest.ini, tox.ini, setup.cfg', () => {
    const ini = code(
      '[pytest]',
      '; comment',
      'addopts = -q',
      '    --ignore=tests/legacy',
      'markers =',
      '    slow: slow tests',
      '[flake8]',
      'testpaths = x',
    );
    expect(extractConfigSettings('pytest.ini', ini)).toEqual({
      'pytest.addopts': '-q --ignore=tests/legacy',
    });
    expect(extractConfigSettings('tox.ini', ini)).toEqual({
      'pytest.addopts': '-q --ignore=tests/legacy',
    });
    expect(
      extractConfigSettings(
        'setup.cfg',
        code('[metadata]', 'name = app', '[tool:pytest]', 'testpaths: tests'),
      ),
    ).toEqual({
      'tool:pytest.testpaths': 'tests',
    });
  });

  it('reads every collect_ignore statement of a conftest.py', () => {
    const text = code(
      'import sys',
      'collect_ignore = ["setup.py"]',
      'if sys.version_info < (3, 10):',
      '    collect_ignore_glob = [',
      '        "*_py310.py",',
      '    ]',
      '    collect_ignore.append("test_match.py")',
    );
    expect(extractConfigSettings('tests/conftest.py', text)).toEqual({
      collect_ignore: 'collect_ignore = ["setup.py"]; collect_ignore.append("test_match.py")',
      collect_ignore_glob: 'collect_ignore_glob = [ "*_py310.py", ]',
    });
  });

  it('reads package.json scripts.test and jest selection keys, and says when it does not parse', () => {
    const manifest = {
      scripts: { test: 'jest', build: 'tsc' },
      jest: { testMatch: ['**/*.test.js'], verbose: true },
    };
    expect(extractConfigSettings('package.json', JSON.stringify(manifest))).toEqual({
      'scripts.test': '"jest"',
      'jest.testMatch': '["**/*.test.js"]',
    });
    expect(extractConfigSettings('package.json', '{ "scripts": ')).toEqual({
      '(whole file)': 'does not parse as JSON',
    });
  });

  it('reads jest/vitest selection keys but not coverage ones, and in vite/vitest files only inside test', () => {
    const jest = code(
      'module.exports = {',
      "  testPathIgnorePatterns: ['/node_modules/', '/legacy/'],",
      "  coverageThreshold: { global: { exclude: ['x'] } },",
      "  projects: [{ roots: ['<rootDir>/a'] }],",
      '};',
    );
    expect(extractConfigSettings('jest.config.cjs', jest)).toEqual({
      testPathIgnorePatterns: "['/node_modules/', '/legacy/']",
      'projects.roots': "['<rootDir>/a']",
    });
    const vitest = code(
      'export default defineConfig({',
      "  server: { fs: { exclude: ['x'] } },",
      "  test: { include: ['tests/**/*.test.ts'], passWithNoTests: true, coverage: { include: ['src'] } },",
      '});',
    );
    expect(extractConfigSettings('vitest.config.mts', vitest)).toEqual({
      'test.include': "['tests/**/*.test.ts']",
      'test.passWithNoTests': 'true',
    });
  });

  it('reads the toolchain of .guardkit/config.yaml', () => {
    const yaml = code(
      'toolchain:',
      '  test: pytest -q',
      '  build: make',
      'coachgate:',
      '  max_strikes: 3',
    );
    expect(extractConfigSettings('.guardkit/config.yaml', yaml)).toEqual({
      'toolchain.test': '"pytest -q"',
      'toolchain.build': '"make"',
    });
    expect(extractConfigSettings('.guardkit/config.yaml', 'coachgate: {}\n')).toEqual({});
  });
});
