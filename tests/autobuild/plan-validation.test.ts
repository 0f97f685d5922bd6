import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planValidation } from '../../src/autobuild/plan-validation.js';
import { parseValidatorVerdict } from '../../src/verdicts/validator-verdict.js';
import { CLI as cli } from '../helpers/cli.js';

describe('plan validation (meta.validation)', () => {
  it('reads the block from YAML or markdown front matter, with defaults, and is off when absent', () => {
    const yaml =
      'meta:\n  validation:\n    enabled: true\n    run_after: wave\n    validators: [validator, issue-verifier]\n    max_validation_attempts: 3\ntasks: []\n';
    expect(planValidation(yaml, 'plan.yaml')).toEqual({
      enabled: true,
      run_after: 'wave',
      validators: ['validator', 'issue-verifier'],
      max_validation_attempts: 3,
    });
    expect(
      planValidation('---\nmeta:\n  validation:\n    enabled: true\n---\n# Plan\n', 'PLAN.md'),
    ).toEqual({
      enabled: true,
      run_after: 'task',
      validators: ['validator'],
      max_validation_attempts: 2,
    });
    expect(planValidation('# A plan with no front matter\n', 'PLAN.md').enabled).toBe(false);
    expect(() =>
      planValidation('meta:\n  validation:\n    validators: [linter]\n', 'plan.yaml'),
    ).toThrow(/meta.validation is invalid: validators.0/);
  });

  it('ships an issue-verifier whose example ending parse_validator_verdict reads as a retry', () => {
    const agent = readFileSync(new URL('../../agents/issue-verifier.md', import.meta.url), 'utf8');
    const example = /```\n(\*\*Verdict[\s\S]*?)```/.exec(agent)![1]!;
    expect(parseValidatorVerdict(example)).toMatchObject({ verdict: 'FAIL', retry: true });
  });

  it('prints it for orchestrators with coachgate plan validation FILE', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-plan-')), 'plan.yaml');
    writeFileSync(
      file,
      'meta:\n  validation:\n    enabled: true\n    validators: [issue-verifier]\n',
    );
    const result = spawnSync(process.execPath, [cli, 'plan', 'validation', file], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      enabled: true,
      run_after: 'task',
      validators: ['issue-verifier'],
      max_validation_attempts: 2,
    });
  });
});
