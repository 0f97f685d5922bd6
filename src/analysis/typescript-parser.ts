import type TypeScript from 'typescript';

let loaded: typeof TypeScript | undefined;

/**
 * The TypeScript compiler costs about half a second to import, and most calls never parse JS/TS: it is
 * loaded the first time a JS/TS test file or runner config has to be parsed, never at start-up.
 */
export async function loadTypeScript(): Promise<typeof TypeScript> {
  loaded ??= (await import('typescript')).default;
  return loaded;
}

/** The compiler, for parsers that run after `loadTypeScript()` has resolved. */
export function typescript(): typeof TypeScript {
  if (!loaded) throw new Error('internal: loadTypeScript() must be awaited before parsing JS/TS');
  return loaded;
}
