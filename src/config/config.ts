import { z } from 'zod';
import { yaml } from './yaml.js';
import { CallerError } from '../errors/errors.js';
import { DEFAULT_SANDBOX_POLICY, NETWORK_MODES, SANDBOX_MODES } from './sandbox-policy.js';

/**
 * `.guardkit/config.yaml`: GuardKit's keys that coachgate honours plus its own `coachgate:` block.
 * Read from the base commit by the repo layer, so the Player cannot relax its own gates.
 */
export const GateNameSchema = z.enum(['tests', 'coverage', 'arch_review', 'plan_audit']);
export type GateName = z.infer<typeof GateNameSchema>;

export const ConfigSchema = z
  .object({
    toolchain: z
      .object({
        test: z
          .string()
          .min(1)
          .optional()
          .describe('Test command, run through `sh -c` exactly as written.'),
        build: z.string().min(1).optional(),
        lint: z.string().min(1).optional(),
        typecheck: z.string().min(1).optional(),
        test_timeout: z
          .number()
          .int()
          .min(1)
          .max(3600)
          .optional()
          .describe('Seconds before a test run is killed (default 300).'),
      })
      .optional(),
    autobuild: z
      .object({
        coach: z
          .object({
            test_execution: z
              .enum(['subprocess', 'sdk', 'login-shell'])
              .optional()
              .describe(
                "`login-shell` runs the tests under the user's login shell ($SHELL -lc; zsh on macOS) so profile-set toolchains are found.",
              ),
          })
          .optional(),
      })
      .optional(),
    coachgate: z
      .object({
        base_ref: z
          .string()
          .min(1)
          .optional()
          .describe('Git ref whose commit is the trusted base.'),
        arch_review_min: z.number().min(0).max(100).default(60),
        max_strikes: z.number().int().min(1).max(100).default(3),
        stall_threshold: z.number().int().min(2).max(50).default(3),
        require_evidence: z.boolean().default(true),
        allow_command_override: z.boolean().default(false),
        required_gates: z
          .array(GateNameSchema)
          .default(['tests'])
          .describe('Gates required even when the Player reports nothing for them.'),
        coverage_min: z
          .number()
          .min(0)
          .max(100)
          .optional()
          .describe('Line coverage percentage the Player must report.'),
        sandbox: z
          .object({
            mode: z
              .enum(SANDBOX_MODES)
              .default(DEFAULT_SANDBOX_POLICY.mode)
              .describe(
                '`required`: refuse to run anything without a working sandbox; `auto` (default): sandboxed where one works, else unsandboxed with a warning in every record; `off`: never (warned too). `serve --sandbox` can only make it stricter.',
              ),
            network: z
              .enum(NETWORK_MODES)
              .default(DEFAULT_SANDBOX_POLICY.network)
              .describe(
                "`none` (default): the run's own loopback only; `loopback`: also the machine's local services (a database on localhost); `host`: the machine's network as is. See docs/sandbox.md.",
              ),
          })
          .prefault({})
          .describe(
            "How test runs, gates and builds of the Player's code are confined (docs/sandbox.md).",
          ),
        trusted_keys: z
          .array(z.string().regex(/^ed25519:[A-Za-z0-9+/=]+$/))
          .optional()
          .describe(
            'Public keys (`coachgate key show`) whose signatures `coachgate gate` accepts on the verdict log and runs.',
          ),
      })
      .prefault({}),
  })
  .describe(
    'coachgate / GuardKit configuration (.guardkit/config.yaml), read from the base commit.',
  );

export type Config = z.infer<typeof ConfigSchema>;

export interface ParsedConfig {
  config: Config;
  warnings: string[];
}

export function defaultConfig(): Config {
  return ConfigSchema.parse({});
}

/** Parses config text. Unknown keys are ignored with a warning; invalid values are a CallerError. */
export function parseConfig(text: string, source = '.guardkit/config.yaml'): ParsedConfig {
  let raw: unknown;
  try {
    raw = yaml().parse(text);
  } catch (error) {
    const where =
      error instanceof yaml().YAMLParseError && error.linePos
        ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}`
        : '';
    throw new CallerError(
      `${source} is not valid YAML${where}: ${(error as Error).message.split('\n')[0]}.`,
      'Fix the file on the base branch.',
    );
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CallerError(
      `${source} must be a YAML mapping (key: value), got ${Array.isArray(raw) ? 'a list' : typeof raw}.`,
    );
  }
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new CallerError(
      `${source} has invalid values: ${problems.join('; ')}.`,
      "Fix them on the base branch: every key is described in coachgate's docs/configuration.md (the JSON Schema ships in the coachgate package as schemas/config.schema.json).",
    );
  }
  return {
    config: result.data,
    warnings: unknownKeys(raw, ConfigSchema).map(
      (key) => `${source}: unknown key "${key}" ignored`,
    ),
  };
}

/** Lists dotted paths present in `value` that the object schema does not declare. */
function unknownKeys(value: unknown, schema: z.ZodType, prefix = ''): string[] {
  const objectSchema = unwrapObject(schema);
  if (!objectSchema || typeof value !== 'object' || value === null || Array.isArray(value))
    return [];
  const shape = objectSchema.shape as Record<string, z.ZodType>;
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const childSchema = shape[key];
    return childSchema ? unknownKeys(child, childSchema, path) : [path];
  });
}

function unwrapObject(schema: z.ZodType): z.ZodObject | undefined {
  let current: z.ZodType = schema;
  // Optional, default and prefault wrappers all expose the wrapped schema as `unwrap()` or `def.innerType`.
  for (let depth = 0; depth < 5; depth++) {
    if (current instanceof z.ZodObject) return current;
    const inner = (current.def as { innerType?: z.ZodType }).innerType;
    if (!inner) return undefined;
    current = inner;
  }
  return undefined;
}
