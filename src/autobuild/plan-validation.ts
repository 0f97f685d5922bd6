import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { CallerError } from '../errors/errors.js';

/** A plan's opt-in validation step: `meta.validation` in the plan file (YAML, or markdown front matter). */
export const PlanValidationSchema = z.object({
  enabled: z.boolean().default(false),
  run_after: z.enum(['task', 'wave', 'plan']).default('task').describe('When the validators run.'),
  validators: z
    .array(z.enum(['validator', 'issue-verifier']))
    .default(['validator'])
    .describe('agents/<name>.md to run, in order.'),
  max_validation_attempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .default(2)
    .describe('Retries with the findings before escalating.'),
});

export type PlanValidation = z.infer<typeof PlanValidationSchema>;

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---/;

/** Reads `meta.validation`; a plan without it is not validated (enabled: false). */
export function planValidation(text: string, source: string): PlanValidation {
  let raw: unknown;
  try {
    raw = parseYaml(FRONT_MATTER.exec(text)?.[1] ?? text);
  } catch (error) {
    throw new CallerError(
      `${source} is not valid YAML: ${(error as Error).message.split('\n')[0]}.`,
    );
  }
  const meta =
    raw && typeof raw === 'object' ? (raw as { meta?: { validation?: unknown } }).meta : undefined;
  const result = PlanValidationSchema.safeParse(meta?.validation ?? {});
  if (!result.success) {
    throw new CallerError(
      `${source} meta.validation is invalid: ${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}.`,
    );
  }
  return result.data;
}
