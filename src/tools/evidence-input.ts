import { z } from 'zod';

/** Evidence a Coach found by reading: a place in the worktree, or a test that passed in the latest run. */
export const evidenceInput = z
  .array(
    z.object({
      criterion: z.string().min(1).describe('Criterion id (AC-001, AC-1, ac1) or its text.'),
      file: z.string().optional().describe('Worktree-relative path.'),
      line: z.number().int().optional().describe('1-based line in file.'),
      snippet: z.string().optional().describe('Text that must occur within 3 lines of line.'),
      test: z
        .string()
        .optional()
        .describe(
          'Test id or name that must have PASSED in the latest stored run (e.g. tests/test_x.py::test_y).',
        ),
      kept: z
        .boolean()
        .optional()
        .describe(
          "The criterion keeps a behaviour the base already has: test names a base test that passed at the base and must pass in the trusted run (base tests on the Player's code); it need not fail on the base code. Checked by record_verdict approve only (it makes the trusted runs).",
        ),
    }),
  )
  .max(500);
