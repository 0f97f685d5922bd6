import { z } from 'zod';
import { CoachTurnRecordSchema } from '../verdicts/coach-turn.js';
import { ConfigSchema } from '../config/config.js';
import { PlayerReportSchema, PlayerTurnRecordSchema } from '../tasks/player-report.js';
import { StoredEvaluationSchema } from '../evaluation/evaluation-record.js';
import { RunRecordSchema } from './run-record.js';
import { TaskWorkResultsSchema } from '../tasks/task-work-results.js';
import { VerdictLogEntrySchema } from '../verdicts/verdict-entry.js';
import { MergeRecordSchema } from './merge-record.js';
import { PinnedBaseSchema } from './pinned-base.js';
import { VerdictHeadSchema } from './verdict-head.js';

/**
 * Every file format coachgate reads or writes, keyed by the JSON Schema file generated from it into
 * schemas/. `io: 'input'` describes what a writer may send (defaults optional); 'output' what coachgate writes.
 */
export const fileFormats: Record<string, { schema: z.ZodType; io: 'input' | 'output' }> = {
  'config.schema.json': { schema: ConfigSchema, io: 'input' },
  'task-work-results.schema.json': { schema: TaskWorkResultsSchema, io: 'input' },
  'player-report.schema.json': { schema: PlayerReportSchema, io: 'input' },
  'player-turn.schema.json': { schema: PlayerTurnRecordSchema, io: 'output' },
  'coach-turn.schema.json': { schema: CoachTurnRecordSchema, io: 'output' },
  'run-record.schema.json': { schema: RunRecordSchema, io: 'output' },
  'run-evaluation.schema.json': { schema: StoredEvaluationSchema, io: 'output' },
  'verdict-log-entry.schema.json': { schema: VerdictLogEntrySchema, io: 'output' },
  'verdict-head.schema.json': { schema: VerdictHeadSchema, io: 'output' },
  'pinned-base.schema.json': { schema: PinnedBaseSchema, io: 'output' },
  'merge-record.schema.json': { schema: MergeRecordSchema, io: 'output' },
};

export function jsonSchemaText(name: string): string {
  const format = fileFormats[name]!;
  const schema = z.toJSONSchema(format.schema, { io: format.io, target: 'draft-2020-12' });
  return `${JSON.stringify({ $id: `https://coachgate.dev/schemas/${name}`, ...schema }, null, 2)}\n`;
}
