import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { esmExports } from '../analysis/esm-exports.js';
import { loadTypeScript } from '../analysis/typescript-parser.js';
import type { NodeObserveConfig } from '../runner/node-call-recorder.js';
import type { ObserveRequest } from './replay.js';

const JS_FILE = /\.[cm]?js$/;

/**
 * What the node call recorder observes in a trusted run: the changed JavaScript product files, and
 * for each ES module among them (`.mjs`, or `.js` under a package.json of `"type": "module"`) the
 * names it exports. undefined when no JavaScript file changed.
 */
export async function nodeObserveConfig(
  request: ObserveRequest,
  root: string,
): Promise<NodeObserveConfig | undefined> {
  const files = request.files.filter((file) => JS_FILE.test(file));
  if (files.length === 0) return undefined;
  await loadTypeScript();
  const esm: NodeObserveConfig['esm'] = {};
  for (const file of files) {
    if (!(await isEsModule(file, root))) continue;
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined) esm[pathToFileURL(file).href] = esmExports(file, text);
  }
  return { files, callers: request.callers, esm };
}

async function isEsModule(file: string, root: string): Promise<boolean> {
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  for (let directory = path.dirname(file); ; directory = path.dirname(directory)) {
    const text = await readFile(path.join(directory, 'package.json'), 'utf8').catch(() => '');
    if (text) {
      try {
        return (JSON.parse(text) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (directory === root || directory === path.dirname(directory)) return false;
  }
}
