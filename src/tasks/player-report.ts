import { z } from 'zod';

/**
 * Most files one list of a Player report may name. Each claimed file is checked in the worktree, so a
 * report naming hundreds of thousands would hold the Coach's call past its client's timeout.
 */
export const MAX_REPORTED_FILES = 5_000;

/** A list of worktree paths in a Player report, bounded by {@link MAX_REPORTED_FILES}. */
export function reportedFiles() {
  return z
    .array(z.string())
    .max(
      MAX_REPORTED_FILES,
      `lists more than ${MAX_REPORTED_FILES} files: name the files this turn created or changed, not the whole tree`,
    );
}

/** One Player turn as recorded in `.guardkit/autobuild/<TASK>/player_turn_<N>.json`. */
export const PlayerReportSchema = z
  .object({
    files_modified: reportedFiles().default([]),
    files_created: reportedFiles().default([]),
    tests_written: reportedFiles().default([]),
    tests_passed: z
      .boolean()
      .describe("The Player's own claim; coachgate runs the tests itself before trusting it."),
    implementation_notes: z.string().default(''),
    concerns: z.array(z.string()).default([]),
    requirements_addressed: z.array(z.string()).default([]),
    requirements_remaining: z.array(z.string()).default([]),
    completion_promises: z
      .array(
        z.object({
          criterion_id: z.string(),
          criterion_text: z.string().optional(),
          status: z.enum(['complete', 'partial', 'incomplete']),
          evidence: z.string().optional(),
          test_file: z.string().optional(),
          implementation_files: reportedFiles().optional(),
        }),
      )
      .optional(),
  })
  .describe('Player turn report, as sent to record_player_report.');

export type PlayerReport = z.infer<typeof PlayerReportSchema>;

/** Flat, as GuardKit writes it: the report's fields next to task_id, turn and recorded_at. */
export const PlayerTurnRecordSchema = PlayerReportSchema.extend({
  task_id: z.string(),
  turn: z.number().int().min(1),
  recorded_at: z.string().describe('ISO 8601 time the server recorded the turn.'),
}).describe(
  'File written by record_player_report: .guardkit/autobuild/<TASK>/player_turn_<N>.json',
);

export type PlayerTurnRecord = z.infer<typeof PlayerTurnRecordSchema>;

/** Key-order-independent JSON, so an identical re-send is recognised whatever order its keys came in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, entry: unknown) =>
    entry && typeof entry === 'object' && !Array.isArray(entry)
      ? Object.fromEntries(
          Object.entries(entry as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : entry,
  );
}
