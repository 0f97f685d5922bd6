import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import {
  CHAIN_START,
  VerdictLogEntrySchema,
  type VerdictLogEntry,
} from '../verdicts/verdict-entry.js';
import {
  keyOf,
  localTrustedKeys,
  signatureProblem,
  signingKey,
  signRecord,
  type TrustedKey,
} from './keys.js';
import { readStateCopy, taskRecordFile, writeMirrored, type MirroredFile } from './mirrored.js';
import { artifactNames, taskDirectory } from './mirror-paths.js';
import { headProblems, lineHash, writeVerdictHead } from './verdict-head.js';

export {
  VerdictIssueSchema,
  VerdictLogEntrySchema,
  type VerdictIssue,
  type VerdictLogEntry,
} from '../verdicts/verdict-entry.js';

export type NewVerdictLogEntry = Omit<
  VerdictLogEntry,
  'seq' | 'prev_sha256' | 'anchored' | 'key_id' | 'signature'
>;

export interface VerdictLog {
  /** Every line that is a valid entry, in file order, even when the chain is broken. */
  entries: VerdictLogEntry[];
  chain: {
    intact: boolean;
    /** One per defect, each naming its line: "line 3: ...". */
    problems: string[];
    /**
     * SHA-256 of the last line (64 zeros when empty). A chain cannot tell that its last line was edited or
     * removed; the signed head (verdicts-head.json) and coach_turn_N.json keep it elsewhere.
     */
    head_sha256: string;
  };
}

export function verdictLogPath(worktree: string, taskId: string): string {
  return path.join(taskDirectory(worktree, taskId), artifactNames.verdictLog);
}

/**
 * Reads the server's copy of `verdicts.jsonl` (never the worktree mirror) and verifies its hash chain,
 * every entry's signature with the local key, and its signed head; a missing file is an empty log.
 */
export async function readVerdictLog(worktree: string, taskId: string): Promise<VerdictLog> {
  const files = await logFiles(worktree, taskId);
  return readAnchoredLog(files, readStateCopy, 'state', await localTrustedKeys());
}

export interface LogFiles {
  log: MirroredFile;
  head: MirroredFile;
}

export async function logFiles(worktree: string, taskId: string): Promise<LogFiles> {
  return {
    log: await taskRecordFile(worktree, taskId, artifactNames.verdictLog),
    head: await taskRecordFile(worktree, taskId, artifactNames.verdictHead),
  };
}

/**
 * The log and its head read with `read` (the server's copy, or the mirror for `gate` in a clone) and
 * verified together. Problems name the head file by the copy read: its state path or mirror path.
 */
export async function readAnchoredLog(
  files: LogFiles,
  read: (file: MirroredFile) => Promise<string | undefined>,
  copy: 'state' | 'mirror',
  keys: TrustedKey[],
): Promise<VerdictLog> {
  const text = (await read(files.log)) ?? '';
  const log = parseVerdictLog(text, keys);
  const headName = copy === 'state' ? files.head.state : files.head.display;
  const anchored = log.entries.some((entry) => entry.anchored);
  const problems = headProblems(await read(files.head), headName, logLines(text), anchored, keys);
  if (problems.length === 0) return log;
  return {
    entries: log.entries,
    chain: { ...log.chain, intact: false, problems: [...log.chain.problems, ...problems] },
  };
}

/**
 * Appends one entry, numbering and linking it to the last line. The caller holds the task lock. The whole
 * file is rewritten atomically, so a crash leaves the old file or the new one, never half a line. A broken
 * chain is refused rather than extended: appending would bury the damage under a valid-looking link.
 */
export async function appendVerdict(
  worktree: string,
  taskId: string,
  entry: NewVerdictLogEntry,
): Promise<VerdictLogEntry> {
  const files = await logFiles(worktree, taskId);
  const file = files.log;
  const text = (await readStateCopy(file)) ?? '';
  const key = await signingKey();
  const log = await readAnchoredLog(files, readStateCopy, 'state', [keyOf(key)]);
  if (!log.chain.intact) {
    throw new CallerError(
      `No verdict was recorded: the server's record in the state directory, ${file.state}, is damaged (${log.chain.problems.join('; ')}).`,
      "A person must restore the task's files in the state directory (e.g. from a backup), or move that task directory aside to start anew; coachgate does not append to a broken chain.",
      { problems: log.chain.problems },
    );
  }
  // The head exists before the first anchored entry, so a missing head always means a deleted one.
  if ((await readStateCopy(files.head)) === undefined)
    await writeVerdictHead(files.head, taskId, logLines(text), key);
  // Parsing puts the fields in schema order and drops unknown keys, so every line has one shape.
  const linked = VerdictLogEntrySchema.parse(
    signRecord(
      VerdictLogEntrySchema.parse({
        ...entry,
        seq: (log.entries.at(-1)?.seq ?? 0) + 1,
        prev_sha256: log.chain.head_sha256,
        anchored: true,
      }),
      key,
    ),
  );
  const existing = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  const next = `${existing}${JSON.stringify(linked)}\n`;
  await writeMirrored(file, next);
  // After the line: a crash between the two leaves a head one line behind, which is not tampering.
  await writeVerdictHead(files.head, taskId, logLines(next), key);
  return linked;
}

/** The log's lines; the newline after the last entry ends it, it does not start another line. */
function logLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * Parses a verdict log's text and verifies its hash chain, and with `keys` every entry's signature (a
 * missing, invalid or unknown-key signature is a problem naming the line). Used on the mirror by `gate`.
 */
export function parseVerdictLog(text: string, keys?: TrustedKey[]): VerdictLog {
  const lines = logLines(text);

  const entries: VerdictLogEntry[] = [];
  const problems: string[] = [];
  // The last seq read and its line number; a seq is expected to grow by one per line from there.
  let lastSeq = 0;
  let lastSeqLine = 0;
  lines.forEach((line, index) => {
    const number = index + 1;
    const parsed = parseLine(line);
    if (!parsed.ok) {
      problems.push(`line ${number}: ${parsed.problem}`);
      return;
    }
    const entry = parsed.entry;
    if (number === 1 && entry.prev_sha256 !== CHAIN_START) {
      problems.push(
        'line 1: prev_sha256 is not the chain start (64 zeros): lines before it were removed',
      );
    } else if (number > 1 && entry.prev_sha256 !== lineHash(lines[index - 1]!)) {
      problems.push(
        `line ${number}: prev_sha256 does not match line ${number - 1}: line ${number - 1} was edited, or lines were removed or inserted between them`,
      );
    }
    const expectedSeq = lastSeq + (number - lastSeqLine);
    if (entry.seq !== expectedSeq) {
      problems.push(
        `line ${number}: seq ${entry.seq}, expected ${expectedSeq}: lines were removed, inserted or reordered before it`,
      );
    }
    const unsigned = keys ? signatureProblem(entry, keys) : null;
    if (unsigned)
      problems.push(
        `line ${number} (seq ${entry.seq}, ${entry.kind} ${entry.decision} turn ${entry.turn}): ${unsigned}`,
      );
    lastSeq = entry.seq;
    lastSeqLine = number;
    entries.push(entry);
  });
  const last = lines.at(-1);
  return {
    entries,
    chain: {
      intact: problems.length === 0,
      problems,
      head_sha256: last === undefined ? CHAIN_START : lineHash(last),
    },
  };
}

function parseLine(
  line: string,
): { ok: true; entry: VerdictLogEntry } | { ok: false; problem: string } {
  if (line.trim() === '')
    return { ok: false, problem: 'empty line (half-written or edited file?)' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return {
      ok: false,
      problem: `invalid JSON (half-written or edited line?): ${(error as Error).message}`,
    };
  }
  const parsed = VerdictLogEntrySchema.safeParse(value);
  if (parsed.success) return { ok: true, entry: parsed.data };
  const issue = parsed.error.issues[0]!;
  return {
    ok: false,
    problem: `not a verdict entry: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
  };
}
