import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { runs } from '../helpers/toolchains.js';
import { GO_CHECK } from '../helpers/go-check.js';

/**
 * Go's build cache is the user's, shared and writable by every go process of the user: Go never
 * verifies a cached output. A hostile Player with a shell reads the action id of a package the base
 * tests build (`GODEBUG=gocachehash=1`) and points its entry at the output of a lenient copy. Here
 * the package is an assertion helper in the module cache (a `replace`d directory there): the broken code passes the Player's own run, and the trusted run, which builds in
 * a private copy of the cache the server keeps, refuses it. The honest change is approved.
 */
const hasGo = runs('go', ['version']);
const openTask = layoutTasks();

const shout = (body: string) =>
  linesOf(
    'package shout',
    '',
    'import "strings"',
    '',
    `func Shout(s string) string { return ${body} }`,
  );
const WHISPER = linesOf('', 'func Whisper(s string) string { return strings.ToLower(s) }');

describe.skipIf(!hasGo)(`Go's build cache (real go)${hasGo ? '' : ' — skipped: no go'}`, () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-go-cache-'));
  const cache = path.join(scratch, 'go-build');
  // The module cache's path: runs read it (the repository's own directories move with each
  // snapshot, so their packages' action ids are not the Player's to know in advance).
  const modules = path.join(scratch, 'mod');
  const checkDir = path.join(modules, 'example.com', 'check@v1.0.0');
  const saved = { GOCACHE: process.env.GOCACHE, GOMODCACHE: process.env.GOMODCACHE };
  /** A module with the check package at `dir`. */
  const checkModule = (dir: string, code: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'go.mod'), 'module example.com/check\n\ngo 1.19\n');
    writeFileSync(path.join(dir, 'check.go'), code);
  };
  const goMod = (module: string, check: string) =>
    `module ${module}\n\ngo 1.19\n\nrequire example.com/check v0.0.0\n\nreplace example.com/check => ${check}\n`;
  const base = () => ({
    'go.mod': goMod('example.com/shout', checkDir),
    'shout.go': shout('strings.ToUpper(s) + "!"'),
    'shout_test.go': linesOf(
      'package shout',
      '',
      'import (',
      '\t"testing"',
      '',
      '\t"example.com/check"',
      ')',
      '',
      'func TestShout(t *testing.T) { check.Equal(t, Shout("hi"), "HI!") }',
    ),
  });
  const task = (player: Record<string, string>) =>
    openTask({
      base: base(),
      player,
      criterion: 'Whisper(s) returns s in lower case',
      evidence: [{ criterion: 'AC-001', file: 'shout.go', snippet: 'func Whisper' }],
    });

  beforeAll(() => {
    checkModule(checkDir, GO_CHECK);
    Object.assign(process.env, { GOCACHE: cache, GOMODCACHE: modules });
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The action id under which `dir`'s module builds example.com/check, from Go's own hash trace. */
  const checkActionId = (dir: string) => {
    const trace = spawnSync('go', ['build', 'example.com/check'], {
      cwd: dir,
      env: { ...process.env, GODEBUG: 'gocachehash=1' },
      encoding: 'utf8',
    }).stderr;
    return [...trace.matchAll(/^HASH\[build example\.com\/check\]: ([0-9a-f]{64})$/gm)].at(-1)![1]!;
  };
  const actionEntry = (id: string) => path.join(cache, id.slice(0, 2), `${id}-a`);

  /** What the Player does with a shell: the base's check package, as cached, never fails. */
  const plantLenientCheck = (worktree: string) => {
    const lenient = path.join(scratch, 'lenient');
    checkModule(path.join(lenient, 'check'), GO_CHECK.replace('got != want', 'false'));
    writeFileSync(path.join(lenient, 'go.mod'), goMod('example.com/lenient', './check'));
    writeFileSync(
      path.join(lenient, 'lenient.go'),
      'package lenient\n\nimport _ "example.com/check"\n',
    );
    const built = readFileSync(actionEntry(checkActionId(lenient)), 'utf8').split(/\s+/);
    const id = checkActionId(worktree);
    // An action entry: "v1 <action id> <output id> <size> <time>", the numbers in 20 columns.
    const entry = `v1 ${id} ${built[2]} ${built[3]!.padStart(20)} ${built[4]!.padStart(20)}\n`;
    writeFileSync(actionEntry(id), entry);
  };

  it("refuses broken code that passes only through a build output planted in the user's cache", async () => {
    const tactic = await task({ 'shout.go': shout('strings.ToUpper(s) + "?"') + WHISPER });
    plantLenientCheck(tactic.repo.dir);
    const refused = await tactic.approve();
    // The Player's own run reads the user's cache, as the user's run does.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /base test \S*TestShout passed at the base but failed in the trusted run/,
    );
  }, 240_000);

  it('approves the honest change, its runs building in the cache the server keeps', async () => {
    const honest = await task({ 'shout.go': shout('strings.ToUpper(s) + "!"') + WHISPER });
    const approved = await honest.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    // What the baseline built is kept in the server's state directory, for the next runs to copy.
    const kept = readdirSync(process.env.COACHGATE_STATE_DIR!, { recursive: true }).filter((file) =>
      /(?:^|\/)go-build\/[0-9a-f]{2}\/[0-9a-f]{64}-a$/.test(String(file)),
    );
    expect(kept.length).toBeGreaterThan(0);
  }, 240_000);
});
