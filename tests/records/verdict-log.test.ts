import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallerError } from '../../src/errors/errors.js';
import { withTaskLock } from '../../src/records/task-lock.js';
import {
  appendVerdict,
  readVerdictLog,
  type NewVerdictLogEntry,
} from '../../src/records/verdict-log.js';
import { taskRecordFile } from '../../src/records/mirrored.js';
import { signingKey, signRecord } from '../../src/records/keys.js';

const TASK = 'TASK-42';
const ZEROS = '0'.repeat(64);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
// The signed head beside the log sees every removed or edited last line too.
const headProblem = expect.stringMatching(/verdicts-head\.json/);

let worktree: string;
let stateLog: string;
let stateHead: string;
beforeEach(async () => {
  worktree = mkdtempSync(path.join(os.tmpdir(), 'coachgate-verdicts-'));
  // The server's records are keyed by the repository's git directory.
  execFileSync('git', ['init', '-q'], { cwd: worktree });
  // The server's own copy: what every decision reads (the worktree file is a mirror of it).
  stateLog = (await taskRecordFile(worktree, TASK, 'verdicts.jsonl')).state;
  stateHead = (await taskRecordFile(worktree, TASK, 'verdicts-head.json')).state;
});
afterEach(() => rmSync(worktree, { recursive: true, force: true }));

function feedback(turn: number, strikes: number): NewVerdictLogEntry {
  return {
    kind: 'verdict',
    turn,
    decision: 'feedback',
    status: 'in_progress',
    strikes,
    recorded_at: `2025-03-0${turn}T10:00:00.000Z`,
    rationale: `turn ${turn}: tests still failing`,
    issues: [
      {
        severity: 'must_fix',
        category: 'tests',
        description: 'ConnectionRefusedError in test_db',
        location: 'src/db.py:12',
      },
    ],
  };
}

async function appendTurns(count: number): Promise<void> {
  for (let turn = 1; turn <= count; turn++)
    await appendVerdict(worktree, TASK, feedback(turn, turn));
}

const logFile = () => stateLog;
const fileLines = () => readFileSync(logFile(), 'utf8').split('\n').slice(0, -1);
const writeLines = (lines: string[]) => writeFileSync(logFile(), `${lines.join('\n')}\n`);

describe('verdict log', () => {
  it('treats a missing file as an empty, intact log', async () => {
    expect(await readVerdictLog(worktree, TASK)).toEqual({
      entries: [],
      chain: { intact: true, problems: [], head_sha256: ZEROS },
    });
  });

  it('numbers entries and links each line to the SHA-256 of the line before it', async () => {
    await appendTurns(4);
    const refused = await appendVerdict(worktree, TASK, {
      ...feedback(5, 4),
      kind: 'refused_approval',
      decision: 'approve',
      reasons: ['no independent test run is stored for this task'],
      stall_reason: null,
    });
    // The worktree file mirrors the server's copy byte for byte.
    expect(
      readFileSync(path.join(worktree, '.guardkit/autobuild/TASK-42/verdicts.jsonl'), 'utf8'),
    ).toBe(readFileSync(logFile(), 'utf8'));
    const lines = fileLines();
    expect(lines).toHaveLength(5);
    expect(lines.map((line) => JSON.parse(line).prev_sha256)).toEqual([
      ZEROS,
      ...lines.slice(0, -1).map(sha256),
    ]);

    const log = await readVerdictLog(worktree, TASK);
    expect(log.chain).toEqual({ intact: true, problems: [], head_sha256: sha256(lines[4]!) });
    expect(log.entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(log.entries[4]).toEqual(refused);
    expect(refused).toMatchObject({
      seq: 5,
      kind: 'refused_approval',
      reasons: ['no independent test run is stored for this task'],
      stall_reason: null,
    });
  });

  it('detects an earlier entry edited from feedback to approve, at the line after it', async () => {
    await appendTurns(4);
    const lines = fileLines();
    lines[1] = lines[1]!.replace('"decision":"feedback"', '"decision":"approve"');
    writeLines(lines);

    const log = await readVerdictLog(worktree, TASK);
    expect(log.chain.intact).toBe(false);
    expect(log.chain.problems).toEqual([
      expect.stringMatching(
        /^line 2 \(seq 2, verdict approve turn 2\): has an invalid signature \(key [0-9a-f]{16}\)/,
      ),
      'line 3: prev_sha256 does not match line 2: line 2 was edited, or lines were removed or inserted between them',
    ]);
    // What parses is still shown, so a person can see what was changed.
    expect(log.entries.map((entry) => entry.decision)).toEqual([
      'feedback',
      'approve',
      'feedback',
      'feedback',
    ]);
  });

  it('detects a deleted line, in the middle or at the start', async () => {
    await appendTurns(5);
    const lines = fileLines();
    writeLines(lines.filter((_, index) => index !== 2));
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      'line 3: prev_sha256 does not match line 2: line 2 was edited, or lines were removed or inserted between them',
      'line 3: seq 4, expected 3: lines were removed, inserted or reordered before it',
      headProblem,
    ]);

    writeLines(lines.slice(1));
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      'line 1: prev_sha256 is not the chain start (64 zeros): lines before it were removed',
      'line 1: seq 2, expected 1: lines were removed, inserted or reordered before it',
      headProblem,
    ]);
  });

  it('reports a half-written or blank line as corrupt, not as an empty record', async () => {
    await appendTurns(3);
    const lines = fileLines();
    writeFileSync(logFile(), `${lines[0]}\n${lines[1]}\n${lines[2]!.slice(0, 40)}`);
    const torn = await readVerdictLog(worktree, TASK);
    expect(torn.chain.intact).toBe(false);
    expect(torn.chain.problems).toEqual([expect.any(String), headProblem]);
    expect(torn.chain.problems[0]).toMatch(
      /^line 3: invalid JSON \(half-written or edited line\?\): /,
    );
    expect(torn.entries.map((entry) => entry.seq)).toEqual([1, 2]);

    writeLines([lines[0]!, '', lines[1]!, lines[2]!]);
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      'line 2: empty line (half-written or edited file?)',
      'line 3: prev_sha256 does not match line 2: line 2 was edited, or lines were removed or inserted between them',
      'line 3: seq 2, expected 3: lines were removed, inserted or reordered before it',
      headProblem,
    ]);
  });

  it('reports a line that is JSON but not a verdict entry', async () => {
    await appendTurns(2);
    const lines = fileLines();
    writeLines([lines[0]!, lines[1]!.replace('"strikes":2', '"strikes":"two"')]);
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      expect.stringMatching(/^line 2: not a verdict entry: strikes: /),
      headProblem,
    ]);
  });

  it('refuses to append to a broken chain and leaves the file as it was', async () => {
    await appendTurns(3);
    const lines = fileLines();
    lines[0] = lines[0]!.replace('"strikes":1', '"strikes":0');
    writeLines(lines);
    const before = readFileSync(logFile(), 'utf8');

    const refusal = await appendVerdict(worktree, TASK, feedback(4, 4)).catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(CallerError);
    expect((refusal as CallerError).message).toContain('No verdict was recorded');
    expect((refusal as CallerError).message).toContain('line 2: prev_sha256 does not match line 1');
    expect((refusal as CallerError).details).toEqual({
      problems: [
        expect.stringMatching(/^line 1 \(seq 1.*invalid signature/),
        expect.stringMatching(/^line 2: /),
      ],
    });
    expect(readFileSync(logFile(), 'utf8')).toBe(before);
  });

  it('rejects a malformed entry without writing anything', async () => {
    await appendTurns(1);
    const before = readFileSync(logFile(), 'utf8');
    const bad = {
      ...feedback(2, 2),
      issues: [{ severity: 'blocker', category: 'x', description: 'y' }],
    } as unknown as NewVerdictLogEntry;
    await expect(appendVerdict(worktree, TASK, bad)).rejects.toThrow(/severity/);
    expect(readFileSync(logFile(), 'utf8')).toBe(before);
  });

  it('keeps a complete last line that lost its final newline, and appends after it', async () => {
    await appendTurns(2);
    writeFileSync(logFile(), readFileSync(logFile(), 'utf8').trimEnd());
    expect((await readVerdictLog(worktree, TASK)).chain.intact).toBe(true);
    await appendVerdict(worktree, TASK, feedback(3, 3));
    const log = await readVerdictLog(worktree, TASK);
    expect(log.chain.intact).toBe(true);
    expect(log.entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
  });

  it('catches an edited last line by its signature (the chain alone cannot see it) and changes head_sha256', async () => {
    await appendTurns(2);
    const head = (await readVerdictLog(worktree, TASK)).chain.head_sha256;
    const lines = fileLines();
    writeLines([lines[0]!, lines[1]!.replace('"decision":"feedback"', '"decision":"approve"')]);
    const edited = await readVerdictLog(worktree, TASK);
    expect(edited.chain.problems).toEqual([
      expect.stringMatching(/^line 2 \(seq 2, verdict approve turn 2\): has an invalid signature/),
      headProblem,
    ]);
    expect(edited.chain.head_sha256).not.toBe(head);
  });

  it('stays one unforked chain when concurrent appends hold the task lock', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        withTaskLock(worktree, TASK, () =>
          appendVerdict(worktree, TASK, feedback(index + 1, index + 1)),
        ),
      ),
    );
    const log = await readVerdictLog(worktree, TASK);
    expect(log.chain).toMatchObject({ intact: true, problems: [] });
    expect(log.entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe("the verdict log's signed head", () => {
  const refusalOf = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

  it('catches lines cut from the end, which leave a valid shorter chain, and refuses to append', async () => {
    await appendTurns(4);
    writeLines(fileLines().slice(0, 2));
    const log = await readVerdictLog(worktree, TASK);
    expect(log.chain.intact).toBe(false);
    expect(log.chain.problems).toEqual([
      `${stateHead} names 4 entries but verdicts.jsonl holds 2: lines were removed from its end`,
    ]);
    const refusal = await refusalOf(appendVerdict(worktree, TASK, feedback(3, 1)));
    expect(refusal).toBeInstanceOf(CallerError);
    expect((refusal as CallerError).message).toContain(
      `the server's record in the state directory, ${stateLog}, is damaged`,
    );
    expect(fileLines()).toHaveLength(2);
  });

  it('catches the head deleted with the tail, and a head edited to match it', async () => {
    await appendTurns(3);
    const otherHead = readFileSync(stateHead, 'utf8');
    writeLines(fileLines().slice(0, 1));
    unlinkSync(stateHead);
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      expect.stringMatching(/verdicts-head\.json is missing, but the log's entries were written/),
    ]);
    // A head edited to match the shorter log no longer verifies.
    writeFileSync(stateHead, otherHead.replace('"entries": 3', '"entries": 1'));
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      expect.stringMatching(/verdicts-head\.json has an invalid signature/),
    ]);
  });

  it('accepts a head one line behind (a crash between the two writes) and moves it on', async () => {
    await appendTurns(2);
    const behind = readFileSync(stateHead, 'utf8');
    await appendVerdict(worktree, TASK, feedback(3, 3));
    writeFileSync(stateHead, behind);
    expect((await readVerdictLog(worktree, TASK)).chain).toMatchObject({ intact: true });
    await appendVerdict(worktree, TASK, feedback(4, 4));
    expect(JSON.parse(readFileSync(stateHead, 'utf8'))).toMatchObject({ entries: 4 });
    expect((await readVerdictLog(worktree, TASK)).chain.intact).toBe(true);
  });

  it('takes a log written before heads existed, and anchors it at the next append', async () => {
    const key = await signingKey();
    const lines: string[] = [];
    for (const turn of [1, 2]) {
      const prev = lines.length === 0 ? ZEROS : sha256(lines.at(-1)!);
      lines.push(
        JSON.stringify(signRecord({ ...feedback(turn, turn), seq: turn, prev_sha256: prev }, key)),
      );
    }
    mkdirSync(path.dirname(logFile()), { recursive: true });
    writeFileSync(logFile(), `${lines.join('\n')}\n`);
    expect((await readVerdictLog(worktree, TASK)).chain).toMatchObject({ intact: true });
    await appendVerdict(worktree, TASK, feedback(3, 3));
    expect(JSON.parse(readFileSync(stateHead, 'utf8'))).toMatchObject({ entries: 3 });
    writeLines(fileLines().slice(0, 2));
    expect((await readVerdictLog(worktree, TASK)).chain.problems).toEqual([
      `${stateHead} names 3 entries but verdicts.jsonl holds 2: lines were removed from its end`,
    ]);
  });
});
