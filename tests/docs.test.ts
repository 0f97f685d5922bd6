import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connect } from './helpers/mcp.js';
import { CLI } from './helpers/cli.js';
import { makeRepo } from './helpers/git-repo.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading || fenced) continue;
    const base = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replaceAll(' ', '-');
    let anchor = base;
    for (let n = 1; seen.has(anchor); n += 1) anchor = `${base}-${n}`;
    seen.add(anchor);
  }
  return seen;
}

/** Code the reader would type: fenced blocks and inline code spans. */
function codeOf(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  return [...blocks, ...[...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!)];
}

/** A markdown table's rows as cells, for the table whose header starts with `first`. */
function tableRows(markdown: string, first: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${first}`));
  expect(start, `a table headed "${first}"`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const codeNames = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

async function listed(role: 'all' | 'player' | 'coach') {
  const { client, close } = await connect({ role });
  try {
    const tools = (await client.listTools()).tools;
    const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    return { tools, prompts };
  } finally {
    await close();
  }
}

describe('the docs match the server and the CLI', () => {
  it('docs/tools.md lists every tool with its real annotations, and no other', async () => {
    const { tools } = await listed('all');
    const rows = tableRows(read('docs/tools.md'), 'Tool');
    const flag = (value: boolean | undefined) => (value ? '✓' : '–');
    expect(
      rows.map(([name, readOnly, destructive, idempotent, openWorld]) => [
        name,
        readOnly,
        destructive,
        idempotent,
        openWorld,
      ]),
    ).toEqual(
      tools.map((tool) => [
        `\`${tool.name}\``,
        flag(tool.annotations?.readOnlyHint),
        flag(tool.annotations?.destructiveHint),
        flag(tool.annotations?.idempotentHint),
        flag(tool.annotations?.openWorldHint),
      ]),
    );
    const headings = [...read('docs/tools.md').matchAll(/^### `(\w+)`$/gm)].map((m) => m[1]);
    expect(headings.filter((name) => !tools.some((tool) => tool.name === name))).toEqual([]);
  });

  it("the roles table names each role's tools and prompts, as the role's server lists them", async () => {
    const rows = tableRows(read('docs/serving.md'), 'Tool');
    for (const [column, role] of [
      [1, 'player'],
      [2, 'coach'],
    ] as const) {
      const { tools, prompts } = await listed(role);
      const documentedTools = rows
        .filter((row) => row[0] !== 'prompts' && row[column] !== '–')
        .flatMap((row) => codeNames(row[0]!));
      expect(documentedTools.sort(), `${role} tools`).toEqual(tools.map((t) => t.name).sort());
      const promptRow = rows.find((row) => row[0] === 'prompts')!;
      expect(codeNames(promptRow[column]!).sort(), `${role} prompts`).toEqual(prompts.sort());
    }
  });

  it('every prompt is described in docs/tools.md, and the README counts tools and prompts right', async () => {
    const { tools, prompts } = await listed('all');
    const section = read('docs/tools.md').split('## Prompts, resources and completions')[1]!;
    for (const prompt of prompts) expect(section).toContain(`\`${prompt}\``);
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
    for (const page of PAGES) {
      for (const match of read(page).matchAll(/\b(\w+) prompts\b/g)) {
        const count = words.indexOf(match[1]!);
        if (count >= 0) expect(count, `${page}: "${match[0]}"`).toBe(prompts.length);
      }
      for (const match of read(page).matchAll(/\b(\d+) (?:coachgate )?tools\b/g))
        expect(Number(match[1]), `${page}: "${match[0]}"`).toBe(tools.length);
    }
  });

  it('every mcp__<server>__<tool> in the docs and agent files names a tool that server serves', async () => {
    const served = {
      'coachgate-player': (await listed('player')).tools.map((tool) => tool.name),
      'coachgate-coach': (await listed('coach')).tools.map((tool) => tool.name),
    };
    const agents = readdirSync(path.join(ROOT, 'agents')).map((file) => `agents/${file}`);
    for (const page of [...PAGES, ...agents]) {
      for (const [, server, tool] of read(page).matchAll(/mcp__([\w-]+?)__(\w+)/g)) {
        if (tool === 'autobuild') continue; // the coach server's prompt, as a slash command
        expect(Object.keys(served), `${page}: server ${server}`).toContain(server);
        expect(served[server as keyof typeof served], `${page}: ${server} ${tool}`).toContain(tool);
      }
    }
  });

  it('docs/cli.md holds the usage `coachgate --help` prints, and the docs name no other command', () => {
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
    const usage = help
      .split('Usage:\n')[1]!
      .split('\n\nOptions:')[0]!
      .split('\n')
      .map((line) => line.slice(2))
      .join('\n');
    expect(read('docs/cli.md')).toContain(usage);
    const commands = new Set(
      [...usage.matchAll(/^coachgate ([a-z][\w-]*)(?: ([a-z][\w-]*))?/gm)].flatMap(
        ([, first, second]) => [first!, ...(second ? [`${first} ${second}`] : [])],
      ),
    );
    expect(commands).toContain('init');
    for (const page of PAGES) {
      // An error message quoted in the docs (`coachgate could not complete …`) is not a command.
      for (const code of codeOf(read(page)).filter((text) => !text.includes('could not'))) {
        for (const [, first, second] of code.matchAll(
          /^\s*(?:\$ )?coachgate ([a-z][\w-]*)(?: ([a-z][\w-]*))?/gm,
        )) {
          const named =
            second && commands.has(`${first} ${second}`) ? `${first} ${second}` : first!;
          expect(commands, `${page} names \`coachgate ${named}\``).toContain(named);
        }
      }
    }
  });

  it('docs/configuration.md documents every key of the config schema, with its default, and no other', () => {
    interface Node {
      properties?: Record<string, Node>;
      default?: unknown;
    }
    const schema = JSON.parse(read('schemas/config.schema.json')) as Node;
    const leaves = new Map<string, unknown>();
    const walk = (node: Node, prefix: string) => {
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        if (child.properties) walk(child, `${prefix}${key}.`);
        else leaves.set(`${prefix}${key}`, child.default);
      }
    };
    walk(schema, '');
    const documented = new Map<string, string>();
    for (const [, keys, fallback] of read('docs/configuration.md').matchAll(
      /^\| (`[a-z_.]+`(?:, `[a-z_.]+`)*) +\| ([^|]+?) +\|/gm,
    ))
      for (const key of keys!.split(', ')) documented.set(key.slice(1, -1), fallback!);
    expect([...documented.keys()].sort()).toEqual([...leaves.keys()].sort());
    // Defaults the schema states must read the same in the table (others are applied in code).
    for (const [key, fallback] of leaves) {
      if (fallback === undefined) continue;
      const shown = typeof fallback === 'string' ? fallback : JSON.stringify(fallback);
      expect(documented.get(key)!.replaceAll('`', ''), key).toBe(shown);
    }
  });

  it('every relative link in the README and docs/ leads to a file, and its #anchor to a heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = read(page).replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [file, anchor] = target!.split('#');
        const resolved = file ? path.join(ROOT, path.dirname(page), file) : path.join(ROOT, page);
        if (!existsSync(resolved)) broken.push(`${page}: ${target} (no such file)`);
        else if (
          anchor &&
          resolved.endsWith('.md') &&
          !anchors(readFileSync(resolved, 'utf8')).has(anchor)
        )
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README loop's first step runs as written: the task is committed and pinned", () => {
    const loop = read('README.md').split('## Run your first loop')[1]!;
    const script = /```sh\n([\s\S]*?)```/.exec(loop)![1]!.replace(/^ {3}/gm, '');
    const repo = makeRepo({ 'README.md': '# project\n' });
    try {
      // `coachgate` as an installed bin: a shim on PATH that starts the package's bundle.
      const bin = path.join(repo.dir, '.bin');
      mkdirSync(bin);
      writeFileSync(
        path.join(bin, 'coachgate'),
        `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`,
        { mode: 0o755 },
      );
      const run = spawnSync('bash', ['-euc', script], {
        cwd: repo.dir,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
      });
      expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/TASK-001: wrote .*\ncommitted [0-9a-f]{12}\nbase pinned to/);
      expect(repo.git('status', '--porcelain', '--', '.guardkit/tasks')).toBe('');
    } finally {
      repo.remove();
    }
  });

  it("after the quick start, the README's `node …/cli.js` commands start the file the demo built and ran", () => {
    const demo: string = JSON.parse(read('package.json')).scripts.demo;
    const [, build, ran] = /^(npm run build) && node (\S+) demo$/.exec(demo) ?? [];
    expect(build, demo).toBe('npm run build');
    const started = new Set(
      [...read('README.md').matchAll(/\bnode (?:\/path\/to\/coachgate\/)?(\S+cli\.js)/g)].map(
        (match) => match[1],
      ),
    );
    expect([...started]).toEqual([ran]);
  });

  it('the README stays short enough to finish', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });
});
