import { describe, expect, it } from 'vitest';
import { codeOnly } from '../../src/analysis/code-only.js';
import { evaluateRequirements } from '../../src/requirements/requirements.js';

const PY =
  'def divide(a, b):\n    """raise ValueError("division by zero")"""\n    # raise ValueError("division by zero")\n    return a / b  # raise later\n    s = "# not a comment"\n';
const JS =
  "// return `Hello, ${name}!`;\nexport function greet(name) {\n  /* throw new TypeError('x') */\n  return `Hi ${name}`; // ok\n}\nconst url = 'http://x';\n";

describe('codeOnly', () => {
  it('blanks Python comments and docstrings but keeps strings and line numbers', async () => {
    const code = await codeOnly('calc.py', PY);
    expect(code.split('\n')).toHaveLength(PY.split('\n').length);
    expect(code).not.toMatch(/ValueError/);
    expect(code).toMatch(/return a \/ b/);
    expect(code).toMatch(/"# not a comment"/);
  });

  it('blanks JS line and block comments with the TypeScript scanner', async () => {
    const code = await codeOnly('src/greet.js', JS);
    expect(code).not.toMatch(/Hello|TypeError|\/\/ ok/);
    expect(code).toMatch(/return `Hi \$\{name\}`;/);
    expect(code).toMatch(/'http:\/\/x'/);
  });
});

describe('snippet evidence must match code', () => {
  const criteria = [{ id: 'AC-001', text: 'divide by zero raises ValueError', checked: false }];
  const check = async (snippet: string) => {
    const files = new Map([['calc.py', PY]]);
    const report = evaluateRequirements({
      criteria,
      player_claims: [],
      promises: [],
      coach_evidence: [{ criterion: 'AC-001', file: 'calc.py', snippet }],
      require_evidence: true,
      files,
      code_only: new Map([['calc.py', await codeOnly('calc.py', PY)]]),
      passed_tests: [],
    });
    return report.criteria[0]!;
  };

  it('refuses a snippet found only in a comment or docstring', async () => {
    expect(await check('raise ValueError("division by zero")')).toMatchObject({
      status: 'claimed_unverified',
      evidence: [{ problem: expect.stringMatching(/only a comment or docstring in calc\.py/) }],
    });
  });

  it('accepts a snippet that is code', async () => {
    expect((await check('return a / b')).status).toBe('verified');
  });
});
