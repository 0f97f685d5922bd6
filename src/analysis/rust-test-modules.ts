import path from 'node:path';
import { isTestAttribute } from '../scope/rust-test-blocks.js';

/**
 * Rust files that hold only tests, read from a crate's sources (repository-relative path → text):
 * the file of a module declared `#[cfg(test)] mod name;` (`name.rs`, `name/mod.rs`, or its
 * `#[path]`), a file that marks itself test-only with `#![cfg(test)]`, and every module declared
 * inside one of those. They are the base's tests, like the inline `#[cfg(test)]` items the trusted
 * snapshot keeps from the base, so the Player's copy never runs in the trusted runs.
 */
export function rustTestModules(sources: ReadonlyMap<string, string>): string[] {
  const found = new Set<string>();
  const declarations = new Map<string, ModuleDeclaration[]>();
  for (const [file, text] of sources) {
    const code = withoutComments(text);
    declarations.set(file, moduleDeclarations(code));
    if (innerAttributes(code).some(isTestAttribute)) found.add(file);
    for (const declared of declarations.get(file)!)
      if (declared.attributes.some(isTestAttribute))
        for (const child of moduleFiles(file, declared, sources)) found.add(child);
  }
  // Whatever a test-only module declares is test-only too (a helpers module of tests.rs).
  for (const file of found)
    for (const declared of declarations.get(file) ?? [])
      for (const child of moduleFiles(file, declared, sources)) found.add(child);
  return [...found];
}

interface ModuleDeclaration {
  name: string;
  /** Its outer attributes, each rewritten as `#[…]`. */
  attributes: string[];
}

const ATTRIBUTE = /#!?\s*\[(?:[^[\]]|\[[^[\]]*\])*\]/g;
const DECLARATION = new RegExp(
  String.raw`((?:#\s*\[(?:[^[\]]|\[[^[\]]*\])*\]\s*)*)` +
    String.raw`(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(?:r#)?([A-Za-z_]\w*)\s*;`,
  'g',
);

/** `mod name;` declarations (not inline `mod name { … }` blocks) with their attributes. */
function moduleDeclarations(code: string): ModuleDeclaration[] {
  return [...code.matchAll(DECLARATION)].map((match) => ({
    name: match[2]!,
    attributes: match[1]!.match(ATTRIBUTE) ?? [],
  }));
}

/** The inner attributes a file opens with (`#![cfg(test)]`), rewritten as outer ones. */
function innerAttributes(code: string): string[] {
  const leading = /^(?:\s*#!\s*\[(?:[^[\]]|\[[^[\]]*\])*\])*/.exec(code)![0];
  return (leading.match(ATTRIBUTE) ?? []).map((attribute) => attribute.replace(/^#!/, '#'));
}

/**
 * The file a declaration in `file` loads, among the crate's sources: a `#[path]` is relative to
 * the declaring file's directory; else a crate root or `mod.rs` holds its children beside it, and
 * `foo.rs` in `foo/`.
 */
function moduleFiles(
  file: string,
  declared: ModuleDeclaration,
  sources: ReadonlyMap<string, string>,
): string[] {
  const directory = path.posix.dirname(file);
  const pathAttribute = declared.attributes
    .map((attribute) => /^#\s*\[\s*path\s*=\s*"([^"]+)"\s*\]$/.exec(attribute)?.[1])
    .find((value) => value !== undefined);
  const name = path.posix.basename(file);
  const ownsDirectory =
    ['lib.rs', 'main.rs', 'mod.rs'].includes(name) || path.posix.basename(directory) === 'bin';
  const childDirectory = ownsDirectory
    ? directory
    : path.posix.join(directory, name.replace(/\.rs$/, ''));
  const candidates = pathAttribute
    ? [path.posix.join(directory, pathAttribute)]
    : [
        path.posix.join(childDirectory, `${declared.name}.rs`),
        path.posix.join(childDirectory, declared.name, 'mod.rs'),
      ];
  return candidates
    .map((candidate) => candidate.replace(/^\.\//, ''))
    .filter((c) => sources.has(c));
}

/**
 * The source with comments blanked (doc comments included); string and char literals are kept
 * whole, so a `//` or `/*` inside one ends nothing.
 */
function withoutComments(text: string): string {
  return text.replace(
    /"(?:[^"\\]|\\.)*"|'(?:[^'\\\n]|\\.)'|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (token) => (token.startsWith('/') ? ' ' : token),
  );
}
