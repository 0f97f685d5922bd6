#!/usr/bin/env node
// Prints about N MB of test-like output in one line shape, with a first error after 1 MB and a later one
// at the end, then exits 1. Used by tests/runner/output-capture.test.ts and bench-reliability.mjs.
//   node scripts/print-output.mjs <lines|one-line|no-newline|progress> <megabytes>
const [shape, megabytes] = [process.argv[2], Number(process.argv[3])];
const MB = 1024 * 1024;
const FIRST_ERROR = 'AssertionError: the first real error';
const drawing = {
  lines: 'x'.repeat(99) + '\n',
  'one-line': 'x',
  'no-newline': 'x',
  progress: '\rrunning 42% [##########          ] 4242/10000',
}[shape];
const noise = drawing?.repeat(Math.ceil(MB / drawing.length)).slice(0, MB);
if (!noise || !(megabytes >= 2)) {
  process.stderr.write(
    'usage: print-output.mjs <lines|one-line|no-newline|progress> <megabytes>\n',
  );
  process.exit(2);
}
// In one-line and no-newline output the error sits inside the giant line, as a crash message would.
const separator = shape === 'lines' || shape === 'progress' ? '\n' : ' ';
const write = (text) =>
  process.stdout.write(text)
    ? undefined
    : new Promise((resolve) => process.stdout.once('drain', resolve));
await write(noise);
await write(`${separator}E   ${FIRST_ERROR}${separator}`);
for (let written = 1; written < megabytes; written++) await write(noise);
await write(`${separator}E   AssertionError: a later error${shape === 'no-newline' ? '' : '\n'}`);
process.exitCode = 1;
