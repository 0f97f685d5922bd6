import { typescript } from '../typescript-parser.js';

/**
 * The module specifiers a JS/TS file loads: static imports and re-exports, `require('…')` and
 * `import('…')` with a literal, as the TypeScript compiler's own pre-processor finds them (no type
 * check, no program). Call after `loadTypeScript()`.
 */
export function javascriptImports(text: string): string[] {
  const info = typescript().preProcessFile(text, true, true);
  return info.importedFiles.map((file) => file.fileName);
}
