import { afterEach, expect, it } from 'vitest';
import { effectivePolicy, requireSandboxAtLeast } from '../../src/sandbox/policy.js';

afterEach(() => requireSandboxAtLeast('off'));

it("serve's --sandbox flag only ever makes the base config's policy stricter", () => {
  requireSandboxAtLeast('required');
  expect(effectivePolicy({ mode: 'off', network: 'host' })).toEqual({
    mode: 'required',
    network: 'host',
  });
  requireSandboxAtLeast('auto');
  expect(effectivePolicy({ mode: 'required', network: 'none' }).mode).toBe('required');
  expect(effectivePolicy({ mode: 'off', network: 'none' }).mode).toBe('auto');
  expect(effectivePolicy(undefined)).toEqual({ mode: 'auto', network: 'none' });
});
