import { describe, expect, it } from 'vitest';
import { parseValidatorVerdict } from '../../src/verdicts/validator-verdict.js';

const FAIL_REPORT = `## Validation report — TASK-API-012

I ran the test suite and reviewed the diff against the acceptance criteria.

| Check | Result |
|-------|--------|
| Tests | 14 passed, 2 failed |
| Lint  | clean |

**Findings:**
- [ERROR] src/app.ts:12 — handler returns 200 when the body is missing
- **FAIL**: retry limit is not configurable (src/config.py:3)
- WARN: README does not mention the new \`--retries\` flag
- [WARNING] \`tests/api.test.ts:40\` - test asserts on log output instead of the response;
  it would pass even if the handler threw.
    - the same pattern appears in tests/api.test.ts:88
- Error messages leak the stack trace in production mode, see src/errors.ts:7

**Summary:** two blocking problems.

**Verdict: FAIL**
`;

describe('parseValidatorVerdict', () => {
  it('reads verdict, levels, texts and locations from a realistic FAIL report', () => {
    const result = parseValidatorVerdict(FAIL_REPORT);
    expect(result.verdict).toBe('FAIL');
    expect(result.retry).toBe(true);
    expect(result.findings).toEqual([
      {
        level: 'error',
        location: 'src/app.ts:12',
        text: 'handler returns 200 when the body is missing',
      },
      { level: 'fail', location: 'src/config.py:3', text: 'retry limit is not configurable' },
      { level: 'warn', text: 'README does not mention the new `--retries` flag' },
      {
        level: 'warn',
        location: 'tests/api.test.ts:40',
        text:
          'test asserts on log output instead of the response;\n' +
          'it would pass even if the handler threw.\n' +
          '  - the same pattern appears in tests/api.test.ts:88',
      },
      {
        level: 'fail',
        location: 'src/errors.ts:7',
        text: 'Error messages leak the stack trace in production mode, see src/errors.ts:7',
      },
    ]);
  });

  it('builds a retry prompt that lists every finding and asks for a fix', () => {
    const prompt = parseValidatorVerdict(FAIL_REPORT).retry_prompt!;
    const lines = prompt.split('\n');
    expect(lines[0]).toBe('## PREVIOUS VALIDATION FAILED');
    expect(lines).toContain(
      '- [error] src/app.ts:12 — handler returns 200 when the body is missing',
    );
    expect(lines).toContain('- [fail] src/config.py:3 — retry limit is not configurable');
    expect(lines).toContain('- [warn] README does not mention the new `--retries` flag');
    expect(lines).toContain('  it would pass even if the handler threw.');
    expect(lines.filter((line) => line.startsWith('- ['))).toHaveLength(5);
    expect(prompt).toMatch(/Fix every finding above before re-submitting/);
  });

  it('defaults unlabelled findings to the verdict level and drops "None"', () => {
    const pass = parseValidatorVerdict(
      'All criteria met.\n\n**Findings:**\n- naming could be clearer in utils\n\n**Verdict: PASS**',
    );
    expect(pass).toEqual({
      verdict: 'PASS',
      findings: [{ level: 'info', text: 'naming could be clearer in utils' }],
      retry: false,
    });
    const warn = parseValidatorVerdict('**Findings:**\n- docs are thin\n\nVerdict: WARN');
    expect(warn.findings).toEqual([{ level: 'warn', text: 'docs are thin' }]);
    expect(warn.retry).toBe(false);
    expect(warn.retry_prompt).toBeUndefined();
    expect(parseValidatorVerdict('**Findings:**\n- None.\n\n**Verdict: PASS**').findings).toEqual(
      [],
    );
  });

  it.each([
    ['**Verdict: FAIL**', 'FAIL'],
    ['Verdict: FAIL', 'FAIL'],
    ['**Verdict:** FAIL', 'FAIL'],
    ['**verdict:**   warn', 'WARN'],
    ['## Verdict: PASS', 'PASS'],
    ['> **VERDICT :  Passed**', 'PASS'],
    ['Final verdict: ❌ FAIL — see findings', 'FAIL'],
  ])('tolerates the verdict spelling %j', (line, verdict) => {
    expect(parseValidatorVerdict(`Some analysis.\n\n${line}\n`).verdict).toBe(verdict);
  });

  it('lets the last verdict line win and ignores templates and quoted code', () => {
    const text = [
      'Initial verdict: PASS',
      'After running the integration tests again:',
      '**Verdict: FAIL**',
      '',
      'Reminder of the required format:',
      '**Verdict: PASS|WARN|FAIL**',
      '```',
      '**Verdict: PASS**',
      '```',
    ].join('\n');
    expect(parseValidatorVerdict(text).verdict).toBe('FAIL');
    expect(
      parseValidatorVerdict('Verdict: FAIL\n...rechecked, flaky test.\nVerdict: PASS').verdict,
    ).toBe('PASS');
  });

  it('reports no verdict and no retry when the verdict line is missing', () => {
    const result = parseValidatorVerdict(
      '**Findings:**\n- [ERROR] src/a.ts:1 — broken\n\nI could not finish the review.',
    );
    expect(result).toEqual({
      verdict: null,
      findings: [{ level: 'error', location: 'src/a.ts:1', text: 'broken' }],
      retry: false,
    });
    expect(parseValidatorVerdict('')).toEqual({ verdict: null, findings: [], retry: false });
  });

  it('keeps a code block under a finding and stops the list at the next section', () => {
    const text = [
      '### Findings (2)',
      'The following problems were found:',
      '',
      '1. **FAIL:** SQL built by string concatenation in `src/db/query.py:21`:',
      '   ```python',
      '   cursor.execute("SELECT * FROM users WHERE id = " + user_id)',
      '   ```',
      '2. [info] consider an index on users.email',
      '',
      'Overall the structure is fine.',
      '- this bullet is not a finding',
      '',
      '**Verdict: FAIL**',
    ].join('\n');
    const result = parseValidatorVerdict(text);
    expect(result.findings).toEqual([
      {
        level: 'fail',
        location: 'src/db/query.py:21',
        text:
          'SQL built by string concatenation in `src/db/query.py:21`:\n' +
          '```python\n' +
          'cursor.execute("SELECT * FROM users WHERE id = " + user_id)\n' +
          '```',
      },
      { level: 'info', text: 'consider an index on users.email' },
    ]);
    expect(result.retry_prompt).toContain(
      '  cursor.execute("SELECT * FROM users WHERE id = " + user_id)',
    );
  });

  it('gives a FAIL without itemised findings a retry prompt that still says what to do', () => {
    const result = parseValidatorVerdict('The build does not compile.\n\n**Verdict: FAIL**');
    expect(result.findings).toEqual([]);
    expect(result.retry).toBe(true);
    expect(result.retry_prompt!.split('\n')[0]).toBe('## PREVIOUS VALIDATION FAILED');
    expect(result.retry_prompt).toMatch(/without itemised findings/);
  });

  it('does not mistake prose words for levels or locations', () => {
    const result = parseValidatorVerdict(
      '**Findings:**\n- Error handling is missing in the retry loop\n- Coverage: 72% of lines\n\n**Verdict: WARN**',
    );
    expect(result.findings).toEqual([
      { level: 'warn', text: 'Error handling is missing in the retry loop' },
      { level: 'warn', text: 'Coverage: 72% of lines' },
    ]);
  });
});
