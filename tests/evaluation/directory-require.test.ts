import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, textOf } from '../helpers/mcp.js';

/**
 * A CommonJS package whose tests load it as `require('..')` and whose published `files` list only
 * `index.js` (jshttp/mime-types 541f9c57b3 adds `mimeScore.js` and requires it from `index.js`):
 * the new module is code under test because the tests reach it through the package's entry, not
 * because a manifest names it.
 */
const TASK = 'TASK-DIR';
const TASK_FILE = `---\nid: ${TASK}\ntitle: Score\nstatus: in_progress\n---\n## Acceptance Criteria\n- [ ] AC-001: score(type) ranks a media type\n`;
const MANIFEST = JSON.stringify({
  name: 'kinds',
  version: '1.0.0',
  files: ['index.js'],
  scripts: { test: 'node --test' },
});
const BASE_INDEX = "exports.kind = (name) => (name.endsWith('.json') ? 'json' : 'text');\n";
const INDEX = `const { score } = require('./score');\n${BASE_INDEX}exports.score = score;\n`;
const SCORE = "exports.score = (type) => (type.startsWith('application/') ? 2 : 1);\n";
const test = (name: string, body: string) =>
  `const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst kinds = require('..');\n\ntest('${name}', () => ${body});\n`;

let repo: TempRepo | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  repo?.remove();
  repo = undefined;
});

async function approve(score: string) {
  repo = makeRepo({
    'package.json': MANIFEST,
    'index.js': BASE_INDEX,
    'test/kind.test.js': test('kinds', "assert.equal(kinds.kind('a.json'), 'json')"),
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
  });
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  const files = {
    'index.js': INDEX,
    'score.js': score,
    'test/score.test.js': test('scores', "assert.equal(kinds.score('application/json'), 2)"),
  };
  for (const [file, content] of Object.entries(files)) repo.write(file, content);
  const connection = await connect({ roots: [repo.dir] });
  close = connection.close;
  const call = (name: string, args: Record<string, unknown>) =>
    callTool(connection.client, name, { worktree: repo!.dir, task_id: TASK, ...args });
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: Object.keys(files),
      tests_written: ['test/score.test.js'],
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  await call('run_independent_tests', {});
  const result = await call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence: [{ criterion: 'AC-001', test: 'scores' }],
  });
  return { result, text: textOf(result) };
}

describe("a module the package's entry requires, reached from require('..')", () => {
  it('is taken into the trusted runs: an honest new module is approved', async () => {
    const { result, text } = await approve(SCORE);
    expect(result.isError, text).toBeFalsy();
  }, 240_000);

  it('is judged there: a new module that breaks a base test is refused by that test', async () => {
    const breaking = `${SCORE}String.prototype.endsWith = () => false;\n`;
    const { result, text } = await approve(breaking);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/base test kinds passed at the base but failed in the trusted run/);
    expect(text).not.toMatch(/changed code the tests load was not judged/);
  }, 240_000);
});
