import { readFileSync } from 'node:fs';

/** From package.json, one level above both src/ (tests) and dist/ (built). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
