import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');

/** Every module under src/, as a path relative to src/. */
function modules(): string[] {
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split(path.sep).join('/'));
}

const ENTRY_ROOMS = ['cli', 'server', 'tools', 'autobuild', 'dashboard'];
const RULE_ROOMS = ['verdicts', 'integrity', 'requirements', 'tasks', 'graph', 'config', 'errors'];
/** What a pure function over plain data never needs. */
const SIDE_EFFECTS =
  /^(node:)?(fs|fs\/promises|child_process|net|http|https)$|^@modelcontextprotocol\//;

/** The specifiers a module imports (static, dynamic and re-exports), relative ones resolved. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(src, file), 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport\()\s*'([^']+)'/g)].map(([, spec]) =>
    spec!.startsWith('.') ? path.posix.join(path.posix.dirname(file), spec!) : spec!,
  );
}

const roomOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '');

describe('rooms', () => {
  it('no two modules share a file name across rooms', () => {
    const byName = new Map<string, string[]>();
    for (const file of modules()) {
      const name = path.posix.basename(file);
      if (name === 'index.ts') continue;
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    const shared = [...byName.values()].filter((paths) => paths.length > 1);
    expect(shared, 'one concept, one module: merge them or name each for what it does').toEqual([]);
  });

  it('no room below actions/ imports it or an entry room, and actions/ imports no entry room', () => {
    const upward = modules().flatMap((file) => {
      const room = roomOf(file);
      if (room === '' || ENTRY_ROOMS.includes(room)) return [];
      const above = room === 'actions' ? ENTRY_ROOMS : [...ENTRY_ROOMS, 'actions'];
      return importsOf(file)
        .filter((target) => above.includes(roomOf(target)) || target === 'cli.js')
        .map((target) => `${file} -> ${target}`);
    });
    expect(upward).toEqual([]);
  });

  it('the rule rooms import nothing with side effects', () => {
    const impure = modules()
      .filter((file) => RULE_ROOMS.includes(roomOf(file)))
      .flatMap((file) => importsOf(file).filter((target) => SIDE_EFFECTS.test(target)));
    expect(impure).toEqual([]);
  });

  it('docs/architecture.md names every room of src/', () => {
    const doc = readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
    const rooms = readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(rooms).not.toContain('core');
    expect(rooms.filter((room) => !doc.includes(`── ${room}/`))).toEqual([]);
  });
});
