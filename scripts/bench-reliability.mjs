#!/usr/bin/env node
// coachgate's own reliability suite, against the built server (`npm run reliability` builds first):
//   1. kill -9 during record writes: N rounds, counting corrupt and lost records;
//   2. N concurrent writers from separate processes: lost records and strike consistency;
//   3. a malformed-input fuzz through stdio: crashes, answers that are not clear errors, and the
//      server's RSS after the storm against its baseline;
//   4. 200 MB of test output in four line shapes: server RSS growth and whether the first error is kept.
// Each prints its figure and target; the exit code is 1 when any target is missed. `--quick` runs a
// small-N version for CI (under a minute); `--only=kill,writers,fuzz,output` picks suites. RSS figures
// need Linux (/proc).
import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const quick = process.argv.includes('--quick');
const SIZES = quick
  ? { killRounds: 5, writers: 4, appendsPerWriter: 10, fuzzFrames: 4_000, outputMegabytes: 20 }
  : { killRounds: 20, writers: 8, appendsPerWriter: 25, fuzzFrames: 10_000, outputMegabytes: 200 };
const RSS_GROWTH_LIMIT_MB = 64;
/**
 * What may stay above the baseline once the server has settled after a storm (the JIT's code for the
 * paths the storm made hot, allocator slack): it left 44 MB before the idle collections, then 14-20 MB
 * while they left V8's young generation grown. Each storm is measured, so an accumulation shows too.
 */
const STORM_RESIDUE_LIMIT_MB = 8;
/** The server collects 1 s after a burst and again 6 s later (src/server/idle-collection.ts). */
const SETTLE_MS = 8_000;

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (module) => pathToFileURL(path.join(root, 'dist', module)).href;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-reliability-'));
// Every process of the suite (this one, writers, servers) keeps its records under one state directory.
process.env.COACHGATE_STATE_DIR = path.join(scratch, 'state');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let missed = 0;
const figure = (label, text, ok) => {
  if (!ok) missed++;
  console.log(`  ${label.padEnd(22)} ${text}  ${ok ? 'ok' : 'MISSED'}`);
};

const { withTaskLock } = await import(dist('records/task-lock.js'));
const { readVerdictLog } = await import(dist('records/verdict-log.js'));
const { mirrorTampering } = await import(dist('records/mirrored.js'));
const { taskStateDirectory } = await import(dist('records/state-directory.js'));
// As `coachgate serve` does at start: nothing creates the signing key on first use.
await (await import(dist('records/keys.js'))).initKey();

/** A git repository the records live in (the task records need a worktree). */
function repository(name, files = {}) {
  const dir = path.join(scratch, name);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'r', GIT_AUTHOR_EMAIL: 'r@example.com' };
  Object.assign(env, { GIT_COMMITTER_NAME: 'r', GIT_COMMITTER_EMAIL: 'r@example.com' });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'base'], { cwd: dir, env });
  return dir;
}

/**
 * A separate process appending feedback verdicts under the task lock, each with strikes one above the
 * last entry's (the read-modify-write record_verdict does). It prints each seq once its write returned.
 */
function writer(worktree, task, count, name) {
  const script = `
    import { withTaskLock } from ${JSON.stringify(dist('records/task-lock.js'))};
    import { appendVerdict, readVerdictLog } from ${JSON.stringify(dist('records/verdict-log.js'))};
    for (let i = 0; i < ${count}; i++) {
      const entry = await withTaskLock(${JSON.stringify(worktree)}, '${task}', async () => {
        const last = (await readVerdictLog(${JSON.stringify(worktree)}, '${task}')).entries.at(-1);
        const strikes = (last?.strikes ?? 0) + 1;
        return appendVerdict(${JSON.stringify(worktree)}, '${task}', { kind: 'verdict', turn: strikes,
          decision: 'feedback', status: 'in_progress', strikes, recorded_at: new Date().toISOString(),
          rationale: '${name}:' + i + ' ' + 'x'.repeat(4000), issues: [] });
      });
      process.stdout.write(entry.seq + '\\n');
    }`;
  return spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function killDuringWrites() {
  const worktree = repository('kill');
  const task = 'TASK-KILL';
  const acknowledged = new Set();
  let corrupt = 0;
  // The lock's notice that it took over from a dead owner is expected here: counted, not printed.
  let takeovers = 0;
  const writeStderr = process.stderr.write;
  process.stderr.write = (text, ...rest) =>
    /taking over the task lock/.test(String(text))
      ? (takeovers++, true)
      : writeStderr.call(process.stderr, text, ...rest);
  for (let round = 0; round < SIZES.killRounds; round++) {
    const child = writer(worktree, task, 1_000_000, `round${round}`);
    let firstWrite;
    const written = new Promise((resolve) => (firstWrite = resolve));
    child.stdout.on('data', (chunk) => {
      for (const seq of String(chunk).split('\n').filter(Boolean)) acknowledged.add(Number(seq));
      firstWrite();
    });
    await written;
    await sleep(5 + ((round * 37) % 120)); // kill at a different point of the write each round
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // The next caller takes the dead lock, repairs the mirror and must find every acknowledged record.
    const problems = await withTaskLock(worktree, task, async () => {
      const stateDirectory = await taskStateDirectory(worktree, task);
      const leftovers = readdirSync(stateDirectory).filter((name) =>
        name.includes('coachgate-tmp'),
      );
      const tampering = await mirrorTampering(worktree, task);
      const log = await readVerdictLog(worktree, task);
      return leftovers.length + tampering.length + (log.chain.intact ? 0 : 1);
    });
    if (problems > 0) corrupt++;
  }
  process.stderr.write = writeStderr;
  const log = await readVerdictLog(worktree, task);
  const present = new Set(log.entries.map((entry) => entry.seq));
  const lost = [...acknowledged].filter((seq) => !present.has(seq)).length;
  const text =
    `${SIZES.killRounds} rounds, ${log.entries.length} records: ${corrupt} corrupt, ${lost} lost ` +
    `(dead lock taken over ${takeovers} times)`;
  figure('kill -9 mid-write', text, corrupt === 0 && lost === 0 && log.chain.intact);
}

async function concurrentWriters() {
  const worktree = repository('writers');
  const task = 'TASK-RACE';
  const started = performance.now();
  const children = Array.from({ length: SIZES.writers }, (_, index) =>
    writer(worktree, task, SIZES.appendsPerWriter, `w${index}`),
  );
  const codes = await Promise.all(
    children.map((child) => new Promise((resolve) => child.once('exit', resolve))),
  );
  const log = await readVerdictLog(worktree, task);
  const expected = SIZES.writers * SIZES.appendsPerWriter;
  const names = new Set(log.entries.map((entry) => entry.rationale.split(' ')[0]));
  const lost = expected - names.size;
  const consistent = log.entries.every(
    (entry, index) => entry.seq === index + 1 && entry.strikes === index + 1,
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  figure(
    'concurrent writers',
    `${SIZES.writers} processes × ${SIZES.appendsPerWriter}: ${log.entries.length}/${expected} records, ` +
      `${lost} lost, strikes ${consistent ? '1..n consistent' : 'INCONSISTENT'}, chain ` +
      `${log.chain.intact ? 'intact' : 'BROKEN'} (${seconds} s)`,
    codes.every((code) => code === 0) && lost === 0 && consistent && log.chain.intact,
  );
}

/** The built server on stdio, spoken to line by line, with its RSS read from /proc. */
class StdioServer {
  constructor(args = []) {
    this.child = spawn(process.execPath, [path.join(root, 'dist', 'cli.js'), ...args], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.answers = [];
    this.byId = new Map();
    this.exited = false;
    this.child.on('exit', () => (this.exited = true));
    let buffered = '';
    this.child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, at));
        buffered = buffered.slice(at + 1);
        if (message.method) continue; // notifications (progress, logging)
        this.answers.push(message);
        if (message.id !== undefined) this.byId.set(message.id, message);
      }
    });
    this.nextId = 1;
  }

  send(line) {
    this.child.stdin.write(`${line}\n`);
  }

  async request(method, params) {
    const id = `r${this.nextId++}`;
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    while (!this.byId.has(id) && !this.exited) await sleep(5);
    return this.byId.get(id);
  }

  async initialize() {
    const clientInfo = { name: 'reliability', version: '0' };
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo,
    });
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  }

  status(field) {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]) / 1024;
  }

  rss() {
    return this.status('VmRSS');
  }

  /** Resets the kernel's peak-RSS mark (VmHWM), so `peak()` covers only what follows. */
  resetPeak() {
    writeFileSync(`/proc/${this.child.pid}/clear_refs`, '5');
  }

  peak() {
    return this.status('VmHWM');
  }

  async stop() {
    this.child.stdin.end();
    if (!this.exited) await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

const FUZZ_SHAPES = [
  (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call",`,
  (id) => JSON.stringify({ id, what: 'not json-rpc' }),
  (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'no/such/method' }),
  (id) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'load_task',
        arguments: { worktree: 'x'.repeat(10_000), task_id: '../../etc' },
      },
    }),
  (id) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'check_graph_cycles', arguments: { edges: 'nope' } },
    }),
  (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'no_tool' } }),
  (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'coach' } }),
  (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping","params":${'['.repeat(5000)}`,
  (id) => `${'\u0000\u00ff'.repeat(50)}"id":${id}}`,
  (id) => JSON.stringify({ jsonrpc: '1.0', id, method: 'ping' }),
];

/** A clear error: a JSON-RPC error or an isError result, with a message, quoting at most a little. */
function clearError(answer) {
  const text = answer.error?.message ?? answer.result?.content?.[0]?.text;
  const isError = answer.error?.code !== undefined || answer.result?.isError === true;
  return (
    isError && typeof text === 'string' && text.length > 0 && JSON.stringify(answer).length < 8192
  );
}

async function malformedInput() {
  const server = new StdioServer(['--root', repository('fuzz')]);
  await server.initialize();
  // A warm-up storm loads and compiles every path the storm takes; the baseline is measured after it.
  await fuzz(server, 500, 1_000_000_000);
  await sleep(SETTLE_MS); // past the server's idle collections
  const baseline = server.rss();
  server.resetPeak();
  const started = server.answers.length;
  const settled = [];
  // Two storms: the second shows whether anything accumulates (a leak) or the first's residue is all.
  for (const firstId of [0, 2_000_000_000]) {
    await fuzz(server, SIZES.fuzzFrames, firstId);
    await sleep(SETTLE_MS);
    settled.push(server.rss());
  }
  const answers = server.answers.slice(started);
  const peak = server.peak();
  const unclear = answers.filter((answer) => !clearError(answer)).length;
  const ping = await server.request('ping', {});
  await server.stop();
  const frames = 2 * SIZES.fuzzFrames;
  figure(
    'malformed-input fuzz',
    `${frames} frames, ${FUZZ_SHAPES.length} shapes: ${answers.length} answers, ` +
      `${unclear} not a clear error, ${server.exited && !ping?.result ? 1 : 0} crashes, ping ` +
      `${ping?.result ? 'answered' : 'NOT answered'}`,
    answers.length === frames && unclear === 0 && ping?.result !== undefined,
  );
  const [first, second] = settled.map((rss) => rss - baseline);
  figure(
    'memory after storms',
    `RSS ${baseline.toFixed(0)} MB baseline, ${peak.toFixed(0)} MB peak; ${SETTLE_MS / 1000} s after ` +
      `storm 1 +${first.toFixed(0)} MB, after storm 2 +${second.toFixed(0)} MB ` +
      `(limit +${STORM_RESIDUE_LIMIT_MB} MB each)`,
    first <= STORM_RESIDUE_LIMIT_MB && second <= STORM_RESIDUE_LIMIT_MB,
  );
}

/** Sends `frames` fuzz frames in batches of 100, waiting for each batch's answers. */
async function fuzz(server, frames, firstId) {
  const expected = server.answers.length + frames;
  for (let i = 0; i < frames; i++) {
    server.send(FUZZ_SHAPES[i % FUZZ_SHAPES.length](firstId + i));
    if (i % 100 === 99 || i === frames - 1) {
      const batch = expected - frames + i + 1;
      for (let waited = 0; server.answers.length < batch && !server.exited; waited += 5) {
        if (waited > 10_000) return;
        await sleep(5);
      }
    }
  }
}

async function hugeOutput() {
  const printer = path.join(root, 'scripts', 'print-output.mjs');
  const megabytes = SIZES.outputMegabytes;
  const config = 'toolchain:\n  test: "node print-output.mjs $SHAPE $MEGABYTES"\n';
  const worktree = repository('output', { 'README.md': 'output\n' });
  execFileSync('mkdir', ['-p', path.join(worktree, '.guardkit')]);
  copyFileSync(printer, path.join(worktree, 'print-output.mjs'));
  const server = new StdioServer(['--root', worktree]);
  await server.initialize();
  const run = async (shape, size) => {
    writeFileSync(
      path.join(worktree, '.guardkit', 'config.yaml'),
      config.replace('$SHAPE', shape).replace('$MEGABYTES', String(size)),
    );
    execFileSync('git', ['add', '-A'], { cwd: worktree });
    execFileSync(
      'git',
      ['-c', 'user.name=r', '-c', 'user.email=r@example.com', 'commit', '-qm', shape],
      {
        cwd: worktree,
      },
    );
    const answer = await server.request('tools/call', {
      name: 'run_independent_tests',
      arguments: { worktree, timeout_s: 900 },
    });
    return answer?.result?.structuredContent;
  };
  await run('lines', 2); // warm-up: modules loaded, caches filled
  for (const shape of ['lines', 'one-line', 'no-newline', 'progress']) {
    await sleep(500);
    const before = server.rss();
    server.resetPeak();
    const started = performance.now();
    const result = await run(shape, megabytes);
    const growth = server.peak() - before;
    const kept = /AssertionError: the first real error/.test(result?.summary ?? '');
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    figure(
      `output: ${shape}`,
      `${((result?.output_bytes ?? 0) / 1048576).toFixed(0)} MB in ${seconds} s: server RSS growth ` +
        `${growth.toFixed(0)} MB (limit ${RSS_GROWTH_LIMIT_MB}), first error ${kept ? 'kept' : 'LOST'}`,
      growth <= RSS_GROWTH_LIMIT_MB && kept && result?.output_bytes >= megabytes * 1048576,
    );
  }
  await server.stop();
}

console.log(`\nReliability${quick ? ' (quick)' : ''}:`);
const suites = {
  kill: killDuringWrites,
  writers: concurrentWriters,
  fuzz: malformedInput,
  output: hugeOutput,
};
const only = process.argv
  .find((argument) => argument.startsWith('--only='))
  ?.slice('--only='.length);
try {
  for (const [name, suite] of Object.entries(suites))
    if (!only || only.split(',').includes(name)) await suite();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(missed === 0 ? '  all targets met' : `  ${missed} target(s) missed`);
process.exitCode = missed === 0 ? 0 : 1;
