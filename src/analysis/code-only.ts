import type TypeScript from 'typescript';
import { isJsFile } from '../scope/test-paths.js';
import { loadTypeScript } from './typescript-parser.js';

/**
 * The file's text with comments (and Python docstrings) blanked out, lines kept in place, so evidence
 * matched against it must be code. Languages without a scanner here come back unchanged. Async because
 * the TypeScript scanner is imported on first use, never at start-up.
 */
export async function codeOnly(file: string, text: string): Promise<string> {
  if (isJsFile(file)) return jsCodeOnly(await loadTypeScript(), text);
  if (file.endsWith('.py')) return pythonCodeOnly(text);
  return text;
}

function blank(text: string): string {
  return text.replace(/[^\n]/g, ' ');
}

function jsCodeOnly(ts: typeof TypeScript, text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.JSX, text);
  let out = '';
  // The scanner cannot tell a `}` that closes `${…}` from a block's; track template nesting to rescan it.
  const templates: number[] = [];
  let braces = 0;
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.CloseBraceToken && templates.at(-1) === braces) {
      templates.pop();
      token = scanner.reScanTemplateToken(false);
    } else if (token === ts.SyntaxKind.OpenBraceToken) braces += 1;
    else if (token === ts.SyntaxKind.CloseBraceToken) braces -= 1;
    if (token === ts.SyntaxKind.TemplateHead || token === ts.SyntaxKind.TemplateMiddle)
      templates.push(braces);
    const piece = scanner.getTokenText();
    const comment =
      token === ts.SyntaxKind.SingleLineCommentTrivia ||
      token === ts.SyntaxKind.MultiLineCommentTrivia;
    out += comment ? blank(piece) : piece;
  }
  return out;
}

/** `#` comments and triple-quoted strings that stand alone as statements (docstrings) are blanked. */
function pythonCodeOnly(text: string): string {
  let out = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '#') {
      const end = text.indexOf('\n', index);
      const stop = end === -1 ? text.length : end;
      out += blank(text.slice(index, stop));
      index = stop;
    } else if (char === '"' || char === "'") {
      const triple = text.startsWith(char.repeat(3), index);
      const quote = triple ? char.repeat(3) : char;
      let end = index + quote.length;
      while (end < text.length && !text.startsWith(quote, end)) end += text[end] === '\\' ? 2 : 1;
      end = Math.min(text.length, end + quote.length);
      const literal = text.slice(index, end);
      const lineStart = out.lastIndexOf('\n') + 1;
      const standalone = triple && out.slice(lineStart).trim() === '';
      out += standalone ? blank(literal) : literal;
      index = end;
    } else {
      out += char;
      index += 1;
    }
  }
  return out;
}
