import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from './cli.js';
import { BAD_GREET, GOOD_GREET, GREET_TESTS } from './node-project.js';

const sdk = (file: string) =>
  JSON.stringify(
    fileURLToPath(
      new URL(`../../node_modules/@modelcontextprotocol/sdk/dist/esm/${file}`, import.meta.url),
    ),
  );
const cli = JSON.stringify(CLI);

/**
 * Connects to coachgate as an agent CLI with it registered would: the driver's endpoint for the
 * Player (`$COACHGATE_MCP_URL`), else the built server over stdio.
 */
const PRELUDE = `
import { writeFileSync, mkdirSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from ${sdk('client/index.js')};
import { StdioClientTransport } from ${sdk('client/stdio.js')};
import { StreamableHTTPClientTransport } from ${sdk('client/streamableHttp.js')};
const worktree = process.env.COACHGATE_WORKTREE;
const turn = Number(process.env.COACHGATE_TURN);
const task = { worktree, task_id: process.env.COACHGATE_TASK_ID };
const client = new Client({ name: 'scripted-agent', version: '0' });
// The driver's endpoint when it gives one (the Player's), else a stdio server of its own (which, in
// the Player's sandbox, relays to that endpoint: SCRIPTED_STDIO=1 takes that way). The whole
// environment, as an agent CLI passes it (the SDK's default keeps only a few variables).
const { COACHGATE_MCP_URL: url, COACHGATE_MCP_TOKEN: token, COACHGATE_STATE_DIR: state } = process.env;
await client.connect(url && !process.env.SCRIPTED_STDIO
  ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer ' + token } } })
  : new StdioClientTransport({ command: process.execPath, args: [${cli}, '--root', worktree, ...(state ? ['--state-dir', state] : [])], env: process.env, stderr: 'ignore' }));
const call = async (name, args) => client.callTool({ name, arguments: { ...task, ...args } }, undefined, { timeout: 120000 });
`;

/**
 * A scripted Player: writes greet.js (buggy until turn `fixAt`; "varying" adds the turn number so each
 * attempt differs) and records its report. A scripted Coach: runs the tests through the server and approves
 * when they pass, else sends feedback. With its hang file present the Coach records its pid and hangs once.
 * A rubber-stamp Coach approves whatever the run says and records nothing when the server refuses.
 */
export function scriptedAgents(): {
  /** Where the scripts are: visible to a sandboxed Player, for a test's own agent scripts. */
  dir: string;
  player: (fixAt: number, varying?: boolean) => string;
  coach: (options?: { hangFile?: string; rubberStamp?: boolean }) => string;
  validator: (mode: 'fail-once' | 'fail-always') => string;
} {
  // Not under /tmp: a sandboxed Player has a private, empty /tmp, and an installed agent CLI lives
  // elsewhere too.
  const scratch = fileURLToPath(new URL('../../.tmp', import.meta.url));
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(path.join(scratch, 'agents-'));
  const player = path.join(dir, 'player.mjs');
  const coach = path.join(dir, 'coach.mjs');
  const validator = path.join(dir, 'validator.mjs');
  // A validator replies in the format agents/validator.md asks for. "fail-once" fails the first time each
  // validator role runs in a worktree (a marker file beside the worktree remembers), then passes.
  writeFileSync(
    validator,
    `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const role = process.env.COACHGATE_ROLE;
const marker = process.env.COACHGATE_WORKTREE + '.' + role + '.validated';
const fail = process.argv[2] === 'fail-always' || !existsSync(marker);
writeFileSync(marker, '');
const prompt = readFileSync(process.env.COACHGATE_PROMPT_FILE, 'utf8');
console.log('Reviewed turn ' + process.env.COACHGATE_TURN + ' as ' + role + (/^# (Validator|Issue verifier)$/m.test(prompt) ? ' with its instructions.' : ' WITHOUT instructions.'));
console.log(fail
  ? '**Verdict: FAIL**\\n\\n**Findings:**\\n- [ERROR] src/greet.js:1 — ' + role + ': greet() has no doc comment.'
  : '**Verdict: PASS**\\n\\n**Findings:**\\n- None');
`,
  );
  writeFileSync(
    player,
    `${PRELUDE}
const fixAt = Number(process.argv[2]);
const varying = process.argv[3] === 'varying';
mkdirSync(path.join(worktree, 'src'), { recursive: true });
mkdirSync(path.join(worktree, 'test'), { recursive: true });
writeFileSync(path.join(worktree, 'src/greet.js'), (turn >= fixAt ? ${JSON.stringify(GOOD_GREET)} : ${JSON.stringify(BAD_GREET)}) + (varying ? '// attempt ' + turn + '\\n' : ''));
writeFileSync(path.join(worktree, 'test/greet.test.js'), ${JSON.stringify(GREET_TESTS)});
await call('record_player_report', { turn, report: { tests_passed: true, files_created: ['src/greet.js', 'test/greet.test.js'] } });
console.log('player turn', turn, 'done');
await client.close();
`,
  );
  writeFileSync(
    coach,
    `${PRELUDE}
const hangFile = process.argv[2] === '--rubber-stamp' ? undefined : process.argv[2];
const rubberStamp = process.argv.includes('--rubber-stamp');
if (hangFile && existsSync(hangFile)) {
  rmSync(hangFile);
  writeFileSync(hangFile + '.pid', String(process.pid));
  await new Promise((resolve) => setTimeout(resolve, 60000));
}
const run = (await call('run_independent_tests', {})).structuredContent;
const evidence = [{ criterion: 'AC-001', test: 'greets by name' }, { criterion: 'AC-002', test: 'rejects empty names' }];
if (rubberStamp) {
  const answer = await call('record_verdict', { turn, decision: 'approve', rationale: 'looks done to me', evidence });
  console.log('approval', answer.isError ? 'refused' : 'recorded');
} else if (run.status === 'passed') {
  await call('record_verdict', { turn, decision: 'approve', rationale: 'independent run passes', evidence });
} else {
  const issues = [{ severity: 'must_fix', category: 'tests', description: 'greet(name) must return "Hello, <name>!"', location: 'src/greet.js:3' }];
  await call('record_verdict', { turn, decision: 'feedback', rationale: 'the independent run fails', issues });
}
console.log('coach turn', turn, 'done');
await client.close();
`,
  );
  const node = JSON.stringify(process.execPath);
  return {
    dir,
    player: (fixAt, varying = false) =>
      `${node} ${JSON.stringify(player)} ${fixAt}${varying ? ' varying' : ''}`,
    validator: (mode) => `${node} ${JSON.stringify(validator)} ${mode}`,
    coach: ({ hangFile, rubberStamp } = {}) =>
      [node, JSON.stringify(coach)]
        .concat(hangFile ? [JSON.stringify(hangFile)] : [])
        .concat(rubberStamp ? ['--rubber-stamp'] : [])
        .join(' '),
  };
}
