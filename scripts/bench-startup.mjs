#!/usr/bin/env node
// Cold start to a tools/list answer and a pure tool's round trip, for coachgate against the reference
// servers/everything and a bare SDK echo server, measured in the same run and printed as ratios.
// Measures the package's bin, bundle/cli.js: needs `npm run build` first (`npm run bench` does it).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-'));
const STARTS = 9;
const ROUND_TRIPS = 500;

const servers = {
  coachgate: {
    args: [path.join(root, 'bundle', 'cli.js'), '--root', scratch],
    tool: ['parse_validator_verdict', { text: '**Verdict: PASS**' }],
  },
  everything: {
    args: [
      path.join(
        root,
        'node_modules',
        '@modelcontextprotocol',
        'server-everything',
        'dist',
        'index.js',
      ),
      'stdio',
    ],
  },
  'bare SDK echo': {
    args: [path.join(here, 'bench', 'echo-server.mjs')],
    tool: ['echo', { text: 'hi' }],
  },
};

/** A server over raw stdio: JSON-RPC requests by id, answered through promises. */
function open(args) {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map();
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const message = JSON.parse(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
      waiting.get(message.id)?.(message);
    }
  });
  let nextId = 0;
  const request = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const initialize = async () => {
    await request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'bench', version: '0' },
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
    );
  };
  const close = () =>
    new Promise((resolve) => {
      child.on('exit', resolve);
      child.stdin.end();
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    });
  return { request, initialize, close };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Spawn → initialize → tools/list answered, in ms. */
async function coldStart(args) {
  const started = performance.now();
  const server = open(args);
  await server.initialize();
  await server.request('tools/list');
  const elapsed = performance.now() - started;
  await server.close();
  return elapsed;
}

/** Median round trip of each server's tool, the two servers' calls alternating so load hits both alike. */
async function roundTrips(entries) {
  const opened = await Promise.all(
    entries.map(async ({ args, tool: [name, input] }) => {
      const server = open(args);
      await server.initialize();
      const call = () => server.request('tools/call', { name, arguments: input });
      for (let i = 0; i < 30; i++) await call();
      return { server, call, times: [] };
    }),
  );
  for (let i = 0; i < ROUND_TRIPS; i++) {
    for (const entry of opened) {
      const started = performance.now();
      await entry.call();
      entry.times.push(performance.now() - started);
    }
  }
  await Promise.all(opened.map(({ server }) => server.close()));
  return opened.map(({ times }) => median(times));
}

const starts = Object.fromEntries(Object.keys(servers).map((name) => [name, []]));
// Interleaved, so a busy moment on the machine hits every server alike.
for (let round = 0; round < STARTS; round++) {
  for (const [name, { args }] of Object.entries(servers)) starts[name].push(await coldStart(args));
}
const start = Object.fromEntries(
  Object.entries(starts).map(([name, values]) => [name, median(values)]),
);
console.log(`\nCold start to tools/list (median of ${STARTS}):`);
for (const [name, ms] of Object.entries(start))
  console.log(`  ${name.padEnd(14)} ${ms.toFixed(0).padStart(5)} ms`);
console.log(
  `  coachgate / everything     ${(start.coachgate / start.everything).toFixed(2)}×  (target ≤ 1.00×)`,
);
console.log(
  `  coachgate / bare SDK echo  ${(start.coachgate / start['bare SDK echo']).toFixed(2)}×`,
);

const [coachgateTrip, echoTrip] = await roundTrips([servers.coachgate, servers['bare SDK echo']]);
const trip = { coachgate: coachgateTrip, echo: echoTrip };
console.log(`\nPure tool round trip (median of ${ROUND_TRIPS}):`);
console.log(`  coachgate parse_validator_verdict  ${trip.coachgate.toFixed(3)} ms`);
console.log(`  bare SDK echo                      ${trip.echo.toFixed(3)} ms`);
console.log(
  `  ratio                              ${(trip.coachgate / trip.echo).toFixed(2)}×  (target ≤ 1.15×)`,
);
rmSync(scratch, { recursive: true, force: true });
