import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/tasks/player-report.js';
import { initKey } from '../../src/records/keys.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { connectOver, TRANSPORTS } from '../helpers/transports.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { BAD_GREET, GOOD_GREET, greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

const TASK = 'TASK-042';
const EVIDENCE = [
  { criterion: 'AC-001', test: 'greets by name' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];
const cleanup: string[] = [];
let repo: TempRepo;
afterEach(() => {
  repo?.remove();
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const mirror = (dir: string, file: string) => path.join(dir, '.guardkit/autobuild', TASK, file);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** `coachgate gate` in `dir` with its own (maybe empty) state directory: a CI machine or a fresh clone. */
function gate(dir: string, stateDir?: string) {
  const env = { ...process.env, ...(stateDir ? { COACHGATE_STATE_DIR: stateDir } : {}) };
  return spawnSync(
    process.execPath,
    [cli, 'gate', '--task', TASK, '--worktree', dir, '--format', 'text'],
    {
      encoding: 'utf8',
      env,
    },
  );
}

function freshClone(source: string): { dir: string; state: string } {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'coachgate-clone-'));
  cleanup.push(parent);
  spawnSync('git', ['clone', '-q', source, path.join(parent, 'clone')]);
  return { dir: path.join(parent, 'clone'), state: path.join(parent, 'empty-state') };
}

/** What a hostile Player writes: a consistent hash chain, signed with a key it made itself (or unsigned). */
function forgeLog(
  entries: Record<string, unknown>[],
  signWith?: ReturnType<typeof generateKeyPairSync>,
): string {
  let previous = '0'.repeat(64);
  return entries
    .map((entry, index) => {
      let value: Record<string, unknown> = { seq: index + 1, ...entry, prev_sha256: previous };
      if (signWith) {
        const der = signWith.publicKey.export({ type: 'spki', format: 'der' });
        value = { ...value, key_id: createHash('sha256').update(der).digest('hex').slice(0, 16) };
        value.signature = sign(
          null,
          Buffer.from(canonicalJson(value)),
          signWith.privateKey,
        ).toString('base64');
      }
      const line = JSON.stringify(value);
      previous = sha256(line);
      return line;
    })
    .map((line) => `${line}\n`)
    .join('');
}

async function approveRealWork(config: string) {
  repo = greetingProject(undefined, config);
  repo.commit('player work');
  const { client, close } = await connect({ roots: [repo.dir] });
  const task = { worktree: repo.dir, task_id: TASK };
  await callTool(client, 'record_player_report', {
    ...task,
    turn: 1,
    report: { tests_passed: true, files_created: ['src/greet.js'] },
  });
  dataOf(await callTool(client, 'run_independent_tests', task));
  expect(
    dataOf(
      await callTool(client, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'approve',
        rationale: 'verified',
        evidence: EVIDENCE,
      }),
    ).status,
  ).toBe('approved');
  await close();
  repo.commit('coachgate records');
}

describe('signed records: coachgate gate with a pinned public key', () => {
  it('passes a real approval in a fresh clone without the state directory, and fails forged or tampered mirrors naming the entry', async () => {
    const { key } = await initKey();
    await approveRealWork(`coachgate:\n  trusted_keys:\n    - "${key.public_key}"\n`);
    expect(gate(repo.dir).stdout).toMatch(
      /PASS[\s\S]*verified: the server's state copy, signatures checked against 1 trusted key/,
    );

    const clean = freshClone(repo.dir);
    const passed = gate(clean.dir, clean.state);
    expect(passed.stdout).toMatch(
      /PASS[\s\S]*the worktree mirror alone \(the server's state directory holds no records of TASK-\d+ for this checkout\), signatures checked against 1 trusted key/,
    );
    expect(passed.status).toBe(0);

    // Forged run record: the approving run rewritten (a failing run made "passed" has the same shape).
    const forgedRun = freshClone(repo.dir);
    const runFile = readdirSync(path.dirname(mirror(forgedRun.dir, 'runs/x'))).find(
      (name) => name.endsWith('.json') && !name.endsWith('.evaluation.json'),
    )!;
    const runPath = mirror(forgedRun.dir, `runs/${runFile}`);
    writeFileSync(
      runPath,
      readFileSync(runPath, 'utf8').replace('"duration_ms": ', '"duration_ms": 1'),
    );
    const runResult = gate(forgedRun.dir, forgedRun.state);
    expect(runResult.status).toBe(1);
    expect(runResult.stdout).toContain(
      `the approving run .guardkit/autobuild/${TASK}/runs/${runFile} has an invalid signature`,
    );

    // Forged verdict log: a consistent chain with an approval signed by the Player's own key, then unsigned.
    const entry = {
      kind: 'verdict',
      turn: 1,
      decision: 'approve',
      status: 'approved',
      strikes: 0,
      recorded_at: new Date().toISOString(),
      rationale: 'ok',
      issues: [],
      run_id: runFile.replace('.json', ''),
    };
    for (const [signer, expected] of [
      [
        generateKeyPairSync('ed25519'),
        /line 1 \(seq 1, verdict approve turn 1\): is signed by key [0-9a-f]{16}, which is not a trusted key/,
      ],
      [undefined, /line 1 \(seq 1, verdict approve turn 1\): has no signature/],
    ] as const) {
      const forged = freshClone(repo.dir);
      writeFileSync(mirror(forged.dir, 'verdicts.jsonl'), forgeLog([entry], signer));
      const result = gate(forged.dir, forged.state);
      expect(result.status).toBe(1);
      expect(result.stdout).toMatch(expected);
    }
  });

  it('without pinned keys verifies against the local key and says so', async () => {
    await approveRealWork('');
    const result = gate(repo.dir);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /no coachgate.trusted_keys pinned: signatures checked against the local key [0-9a-f]{16}/,
    );
  });
});

describe.each(TRANSPORTS)('forged records against the server (MCP over %s)', (transport) => {
  it('a forged 99991231T… run, a forged verdict log and a forged baseline cache change no decision and are reported', async () => {
    // The base has the two tests (so its cached tests_total is 2); the Player's change breaks one.
    repo = greetingProject(GOOD_GREET);
    repo.commit('greeting with tests');
    repo.git('branch', '-f', 'main', 'HEAD');
    repo.write('src/greet.js', BAD_GREET);
    const { client, close } = await connectOver(transport, repo.dir);
    const task = { worktree: repo.dir, task_id: TASK };
    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_modified: ['src/greet.js'] },
    });
    const real = dataOf(
      await callTool(client, 'run_independent_tests', { ...task, compare_baseline: true }),
    );
    expect(real.status).toBe('failed');
    expect(real.signature).toMatch(/^[A-Za-z0-9+/=]+$/);

    // A "passed" run whose name sorts after every real one, with the real tree hash.
    const forgedId = '99991231T235959999Z-ffff';
    writeFileSync(
      mirror(repo.dir, `runs/${forgedId}.json`),
      JSON.stringify({
        ...real,
        run_id: forgedId,
        status: 'passed',
        counts: { ...real.counts, failed: 0, passed: 2 },
        tests: [],
      }),
    );
    // A verdict log claiming approval.
    writeFileSync(
      mirror(repo.dir, 'verdicts.jsonl'),
      forgeLog([
        {
          kind: 'verdict',
          turn: 1,
          decision: 'approve',
          status: 'approved',
          strikes: 0,
          recorded_at: 'x',
          rationale: 'ok',
          issues: [],
          run_id: forgedId,
        },
      ]),
    );
    // A baseline cache that says the base had fewer tests (hiding a test-count drop).
    const cacheDir = path.join(repo.dir, '.guardkit/autobuild/.baseline-cache');
    // The runner's baseline, not the trusted runs' (`evaluation-…`), which an early baseline run
    // beside the candidate run may have written too.
    const cacheName = readdirSync(cacheDir).find((name) => !name.startsWith('evaluation-'))!;
    const cachePath = path.join(cacheDir, cacheName);
    const cacheText = readFileSync(cachePath, 'utf8');
    const cache = JSON.parse(cacheText);
    expect(cache.tests_total).toBeGreaterThan(0);
    const forgeCache = () =>
      writeFileSync(cachePath, JSON.stringify({ ...cache, tests_total: 0 }, null, 2));
    forgeCache();
    // An entry the server has no copy of is never read (it computes what it lacks) and may come from a
    // clone's branch: not reported.
    writeFileSync(path.join(cacheDir, 'from-another-clone.json'), '{}');
    const cacheFinding = {
      file: `.guardkit/autobuild/.baseline-cache/${cacheName}`,
      entry: `baseline cache entry ${cacheName.replace('.json', '')}`,
      difference: `field tests_total: server ${cache.tests_total}, mirror 0`,
    };

    const status = dataOf(await callTool(client, 'task_status', task));
    expect(status.status).toBe('in_progress');
    expect(status.latest_run).toMatchObject({ run_id: real.run_id, status: 'failed' });
    expect(status.mirror_tampering).toEqual(
      expect.arrayContaining([
        {
          file: `.guardkit/autobuild/${TASK}/runs/${forgedId}.json`,
          entry: `run ${forgedId}`,
          difference: 'not written by the server: it has no copy of this record',
        },
        {
          file: `.guardkit/autobuild/${TASK}/verdicts.jsonl`,
          entry: 'whole file',
          difference: 'not written by the server: it has no copy of this record',
        },
        cacheFinding,
      ]),
    );
    // Stall detection reads the server's verdict log and reports the same differences.
    const stall = dataOf(await callTool(client, 'detect_stall', task));
    expect(stall).toMatchObject({ stalled: false, signatures: [] });
    expect(stall.mirror_tampering).toEqual(status.mirror_tampering);
    expect(JSON.stringify(status.mirror_tampering)).not.toContain('from-another-clone');
    const summary = textOf(await callTool(client, 'task_status', task));
    expect(summary).toMatch(/MIRROR TAMPERED/);
    expect(summary).toContain(`${cacheFinding.entry}: ${cacheFinding.difference}`);

    const refused = await callTool(client, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'forged',
      evidence: EVIDENCE,
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `the worktree mirror was changed: .guardkit/autobuild/${TASK}/runs/${forgedId}.json run ${forgedId}`,
    );
    expect(textOf(refused)).toContain(
      `the worktree mirror was changed: ${cacheFinding.file} ${cacheFinding.entry}: ${cacheFinding.difference}`,
    );
    expect(textOf(refused)).toMatch(/latest run .* status failed|run .* failed/i);
    // The locked call restored the cache mirror from the server's copy.
    expect(JSON.parse(readFileSync(cachePath, 'utf8'))).toEqual(cache);

    forgeCache();
    const gated = gate(repo.dir);
    expect(gated.status).toBe(1);
    expect(gated.stdout).toContain(
      `the mirror was changed: ${cacheFinding.file} ${cacheFinding.entry}: ${cacheFinding.difference}`,
    );
    const again = dataOf(
      await callTool(client, 'run_independent_tests', { ...task, compare_baseline: true }),
    );
    expect(again.baseline).toMatchObject({ cached: true, tests_total: cache.tests_total });
    expect(readFileSync(cachePath, 'utf8')).toBe(cacheText);
    await close();
  });

  it('refuses to write through a symlinked review.md, and no far turn can lock the Coach out', async () => {
    repo = greetingProject(BAD_GREET);
    const { client, close } = await connectOver(transport, repo.dir);
    const task = { worktree: repo.dir, task_id: TASK };
    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    const far = await callTool(client, 'record_verdict', {
      ...task,
      turn: 1000,
      decision: 'feedback',
      rationale: 'lockout',
    });
    expect(textOf(far)).toMatch(
      /Turn 1000 is not the turn under review for TASK-042: the verdict belongs to turn 1/,
    );
    expect(dataOf(await callTool(client, 'task_status', task)).turns).toHaveLength(1);

    const outside = path.join(
      mkdtempSync(path.join(os.tmpdir(), 'coachgate-outside-')),
      'victim.txt',
    );
    cleanup.push(path.dirname(outside));
    writeFileSync(outside, 'keep me\n');
    symlinkSync(outside, mirror(repo.dir, 'review.md'));
    const refused = await callTool(client, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'feedback',
      rationale: 'fix the greeting',
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(
      /Refusing to write .*review\.md: .*review\.md is a symbolic link/,
    );
    expect(readFileSync(outside, 'utf8')).toBe('keep me\n');
    // Refused before the first write: no verdict in the server's copy, no strike.
    expect(dataOf(await callTool(client, 'task_status', task))).toMatchObject({
      strikes: 0,
      verdict_chain: { entries: 0 },
    });
    await close();
  });

  it('refuses to write through a symlinked task directory, and records nothing the mirror lacks', async () => {
    repo = greetingProject(BAD_GREET);
    const { client, close } = await connectOver(transport, repo.dir);
    const task = { worktree: repo.dir, task_id: TASK };
    const outside = mkdtempSync(path.join(os.tmpdir(), 'coachgate-outside-'));
    cleanup.push(outside);
    mkdirSync(path.join(repo.dir, '.guardkit/autobuild'), { recursive: true });
    symlinkSync(outside, path.join(repo.dir, '.guardkit/autobuild', TASK));
    const report = { tests_passed: true, files_created: ['src/greet.js'] };
    const refused = await callTool(client, 'record_player_report', { ...task, turn: 1, report });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/Refusing to write .*TASK-042.* is a symbolic link/);
    expect(readdirSync(outside)).toEqual([]);
    expect(dataOf(await callTool(client, 'task_status', task)).turns).toEqual([]);

    rmSync(path.join(repo.dir, '.guardkit/autobuild', TASK));
    const recorded = dataOf(
      await callTool(client, 'record_player_report', { ...task, turn: 1, report }),
    );
    expect(recorded).toMatchObject({ recorded: true, turn: 1 });
    expect(dataOf(await callTool(client, 'task_status', task)).mirror_tampering).toEqual([]);
    await close();
  });
});
