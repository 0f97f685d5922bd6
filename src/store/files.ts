import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { readRegularFile } from '../repo/read-text.js';

export async function pathExists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

export type JsonFile<T = unknown> =
  | { state: 'missing'; path: string }
  | { state: 'ok'; path: string; value: T }
  | { state: 'corrupt'; path: string; problem: string };

/** Temp file + rename: a reader sees the old file or the new one, never half of one. */
export async function writeFileAtomically(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, content, { encoding: 'utf8' });
}

export async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Reads JSON, telling "missing" from "corrupt" (with line and column) — a broken record is never empty. */
export async function readJsonFile<T = unknown>(file: string): Promise<JsonFile<T>> {
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing', path: file };
    return { state: 'corrupt', path: file, problem: `cannot read: ${(error as Error).message}` };
  }
  const parsed = parseJsonText(text);
  return parsed.ok ? { state: 'ok', path: file, value: parsed.value as T } : { state: 'corrupt', path: file, problem: parsed.problem };
}

function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: false, problem: 'file is empty (half-written?)' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : text.length;
    const { line, column } = lineAndColumn(text, offset);
    return { ok: false, problem: `invalid JSON at line ${line}, column ${column}: ${message}` };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}
