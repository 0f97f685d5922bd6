#!/usr/bin/env node
// Malformed-input storm through stdio: N bad frames of several shapes to the built server, counting answers
// that are clear JSON-RPC errors or isError results, crashes, and the server's RSS before, at peak and after.
// Linux only for the RSS figures (/proc). Needs a build first (`npm run bench` does it).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');
const FRAMES = 10_000;
const child = spawn(process.execPath, [cli], { stdio: ['pipe', 'pipe', 'ignore'] });
const rss = () => {
  try {
    return (
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024
    );
  } catch {
    return NaN;
  }
};
let buffered = '';
const answers = new Map();
child.stdout.on('data', (chunk) => {
  buffered += chunk;
  for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
    const message = JSON.parse(buffered.slice(0, at));
    buffered = buffered.slice(at + 1);
    if (message.id !== undefined) answers.set(message.id, message);
  }
});
let exited = false;
child.on('exit', () => (exited = true));
const send = (line) => child.stdin.write(`${line}\n`);
const wait = async (id) => {
  while (!answers.has(id) && !exited) await new Promise((resolve) => setTimeout(resolve, 5));
  return answers.get(id);
};
send(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'fuzz', version: '0' },
    },
  }),
);
await wait('init');
send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
const before = rss();
let peak = before;
const shapes = [
  (i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/call",`,
  (i) => JSON.stringify({ id: i, what: 'not json-rpc' }),
  (i) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: {
        name: 'load_task',
        arguments: { worktree: 'x'.repeat(10_000), task_id: '../../etc' },
      },
    }),
  (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'no/such/method' }),
  (i) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'check_graph_cycles', arguments: { edges: 'nope' } },
    }),
];
let clear = 0;
for (let i = 0; i < FRAMES; i++) {
  send(shapes[i % shapes.length](i));
  if (i % 100 === 99) {
    for (let j = i - 99; j <= i; j++) {
      const answer = await wait(j);
      if (answer?.error?.code || answer?.result?.isError) clear++;
    }
    peak = Math.max(peak, rss());
  }
}
send(JSON.stringify({ jsonrpc: '2.0', id: 'ping', method: 'ping' }));
const alive = (await wait('ping'))?.result !== undefined;
await new Promise((resolve) => setTimeout(resolve, 1000));
const after = rss();
console.log(`\nMalformed-input storm (${FRAMES} frames, 5 shapes):`);
console.log(
  `  clear errors   ${clear} / ${FRAMES}; crashes ${exited ? 1 : 0}; ping afterwards ${alive ? 'answered' : 'NOT answered'}`,
);
console.log(
  `  server RSS     ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB peak, ${after.toFixed(0)} MB after (growth ${(after - before).toFixed(0)} MB)`,
);
child.stdin.end();
