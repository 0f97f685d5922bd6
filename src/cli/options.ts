import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CallerError } from '../errors/errors.js';

/** Writes to stdout: the CLI's `print`, passed in so command modules never write there on their own. */
export type Print = (text: string) => void;

/** parseArgs, with its errors turned into caller mistakes. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CallerError((error as Error).message, 'Run "coachgate --help" for usage.');
  }
}
