import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SignatureFields } from '../verdicts/verdict-entry.js';
import { signatureProblem, signRecord, type SigningKey, type TrustedKey } from './keys.js';
import { writeMirrored, type MirroredFile } from './mirrored.js';

/**
 * The verdict log's head, kept beside it in `verdicts-head.json` and signed: how many lines the log
 * held and the SHA-256 of the last. A hash chain cannot tell that lines were cut from its end (the
 * shorter chain is valid); a signed head naming more lines than the log holds can.
 */
export const VerdictHeadSchema = z
  .object({
    task_id: z.string(),
    entries: z.number().int().min(0).describe('How many lines verdicts.jsonl held.'),
    head_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('SHA-256 (hex) of its last line; 64 zeros for an empty log.'),
    recorded_at: z.string(),
    ...SignatureFields,
  })
  .describe(
    "The verdict log's signed head (.guardkit/autobuild/<TASK>/verdicts-head.json): lines cut from the log's end are detected.",
  );

export type VerdictHead = z.infer<typeof VerdictHeadSchema>;

export const ZERO_HASH = '0'.repeat(64);

export function lineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
}

/** Writes the signed head for `lines` (the log's lines, without their newlines). Caller holds the lock. */
export async function writeVerdictHead(
  file: MirroredFile,
  taskId: string,
  lines: string[],
  key: SigningKey,
): Promise<void> {
  const last = lines.at(-1);
  const head = signRecord(
    VerdictHeadSchema.parse({
      task_id: taskId,
      entries: lines.length,
      head_sha256: last === undefined ? ZERO_HASH : lineHash(last),
      recorded_at: new Date().toISOString(),
    }),
    key,
  );
  await writeMirrored(file, `${JSON.stringify(VerdictHeadSchema.parse(head), null, 2)}\n`);
}

/**
 * What the head file says about the log's `lines`. The head is written after the log line, so a crash
 * between the two leaves a head one line behind: a head behind the log is normal, one ahead of it means
 * lines were removed. `anchored`: some entry was written by a server that keeps a head, so a missing
 * head file was deleted (the server writes it before the first such entry).
 */
export function headProblems(
  headText: string | undefined,
  headName: string,
  lines: string[],
  anchored: boolean,
  keys: TrustedKey[] | undefined,
): string[] {
  if (headText === undefined)
    return anchored
      ? [
          `${headName} is missing, but the log's entries were written with a head file: it was deleted (lines may have been cut from the log's end)`,
        ]
      : [];
  const head = parseHead(headText);
  if (typeof head === 'string') return [`${headName} ${head}`];
  const unsigned = keys ? signatureProblem(head, keys) : null;
  if (unsigned) return [`${headName} ${unsigned}`];
  if (head.entries > lines.length)
    return [
      `${headName} names ${head.entries} entries but verdicts.jsonl holds ${lines.length}: lines were removed from its end`,
    ];
  const line = lines[head.entries - 1];
  const hash = line === undefined ? ZERO_HASH : lineHash(line);
  return hash === head.head_sha256
    ? []
    : [
        `line ${head.entries} does not match the head in ${headName}: it was edited, or lines were removed and others written in their place`,
      ];
}

/** The head, or what is wrong with the file. Never echoes the file's text. */
function parseHead(text: string): VerdictHead | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'is not valid JSON (half-written or edited?)';
  }
  const parsed = VerdictHeadSchema.safeParse(value);
  return parsed.success ? parsed.data : 'is not a verdict head record';
}
