/**
 * Whether a conftest.py the Player added only provides fixtures and helpers to its new tests, so the
 * new-tests run may take it: at the top level only imports, a docstring, constants, plain functions
 * and classes and non-autouse `@pytest.fixture`s; no `pytest_*` hook, no other decorator, and no
 * line anywhere that patches, replaces or reaches into modules (setattr, monkeypatch, mock.patch,
 * sys.modules, builtins, an attribute assigned on something other than `self`). Any doubt keeps it
 * out: then the base's test infrastructure stays as it is.
 */
export function isFixtureOnlyConftest(text: string): boolean {
  let inDocstring = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trimEnd();
    if (line.trim() === '') continue;
    if (inDocstring) {
      if (/"""|'''/.test(line)) inDocstring = false;
      continue;
    }
    if (REACHES_OUT.test(line)) return false;
    if (/^\s/.test(line)) continue; // inside a definition: checked by REACHES_OUT above
    if (/^(?:"""|''')/.test(line)) {
      inDocstring = !/^(?:"""|''').*(?:"""|''')$/.test(line.trim()) || line.trim().length === 3;
      continue;
    }
    if (!TOP_LEVEL_ALLOWED.some((pattern) => pattern.test(line))) return false;
  }
  return true;
}

const TOP_LEVEL_ALLOWED = [
  /^(?:import|from)\s/,
  /^@pytest\.fixture(?:\((?![^)]*autouse\s*=\s*True)[^)]*\))?\s*$/,
  /^(?:async\s+)?def\s+(?!pytest_)\w+\s*\(/,
  /^class\s+\w+/,
  /^[A-Z_][A-Z0-9_]*\s*=\s*[^=]/,
  /^[)\]}]/,
];

const REACHES_OUT =
  /\b(?:setattr|delattr|monkeypatch|patch|sys\.modules|sys\.path|builtins|__builtins__|globals\(\)|importlib|__import__|exec|eval)\b|^\s*(?!self\b)\w+(?:\.\w+)+\s*=[^=]/;
