import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';

describe('parseConfig', () => {
  it('applies defaults for an empty file', () => {
    const { config, warnings } = parseConfig('');
    expect(config.coachgate).toMatchObject({
      arch_review_min: 60,
      max_strikes: 3,
      stall_threshold: 3,
      require_evidence: true,
      allow_command_override: false,
    });
    expect(warnings).toEqual([]);
  });

  it('honours GuardKit keys and warns about unknown ones without failing', () => {
    const { config, warnings } = parseConfig(
      'toolchain:\n  test: pytest -q\n  test_timeout: 120\n  formatter: black\nautobuild:\n  coach:\n    test_execution: login-shell\nproject:\n  name: demo\ncoachgate:\n  max_strikes: 5\n',
    );
    expect(config.toolchain).toMatchObject({ test: 'pytest -q', test_timeout: 120 });
    expect(config.autobuild?.coach?.test_execution).toBe('login-shell');
    expect(config.coachgate.max_strikes).toBe(5);
    expect(warnings).toEqual([
      '.guardkit/config.yaml: unknown key "toolchain.formatter" ignored',
      '.guardkit/config.yaml: unknown key "project" ignored',
    ]);
  });

  it('reads coachgate.sandbox: auto with no network by default, required/loopback when set, nothing else', () => {
    expect(parseConfig('').config.coachgate.sandbox).toEqual({ mode: 'auto', network: 'none' });
    expect(
      parseConfig('coachgate:\n  sandbox:\n    mode: required\n    network: loopback\n').config
        .coachgate.sandbox,
    ).toEqual({ mode: 'required', network: 'loopback' });
    expect(() => parseConfig('coachgate:\n  sandbox:\n    mode: maybe\n')).toThrow(
      /coachgate\.sandbox\.mode/,
    );
    expect(() => parseConfig('coachgate:\n  sandbox:\n    network: lan\n')).toThrow(
      /coachgate\.sandbox\.network/,
    );
  });

  it('rejects invalid values with the key path', () => {
    expect(() => parseConfig('coachgate:\n  max_strikes: zero\n')).toThrow(
      /coachgate\.max_strikes/,
    );
    expect(() => parseConfig('toolchain:\n  test_timeout: 99999\n')).toThrow(
      /toolchain\.test_timeout/,
    );
    // The user's repository has no schemas/ folder: the pointer names coachgate's own docs.
    expect(() => parseConfig('coachgate:\n  max_strikes: zero\n')).toThrow(
      /described in coachgate's docs\/configuration\.md \(the JSON Schema ships in the coachgate package/,
    );
  });

  it('reports YAML syntax errors with a position', () => {
    expect(() => parseConfig('toolchain: [oops\n')).toThrow(/not valid YAML at line \d+/);
  });
});
