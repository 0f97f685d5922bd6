import { createRequire } from 'node:module';

/**
 * The `yaml` package, required on first use (its CommonJS build loads synchronously) rather than at start-up:
 * answering `tools/list` never parses YAML, and every module imported up front delays the first answer.
 */
export function yaml(): typeof import('yaml') {
  return createRequire(import.meta.url)('yaml') as typeof import('yaml');
}
