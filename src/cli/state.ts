import path from 'node:path';
import { repinBase } from '../actions/task-scope.js';
import { parseSandboxMode, requireSandboxAtLeast } from '../sandbox/policy.js';
import { CallerError } from '../errors/errors.js';
import { initKey, existingSigningKey, privateKeyPath } from '../records/keys.js';
import { stateRoot, useStateDirectory } from '../records/state-directory.js';

export const STATE_USAGE = `  coachgate key init                               create the signing key (serve and autobuild also do
                                                   at start; nothing else ever creates one)
  coachgate key show                               print the public key, for coachgate.trusted_keys
  coachgate task pin-base --task ID --base REF [--worktree DIR]
                                                   re-pin the base commit a task is evaluated against`;

export const STATE_OPTIONS_USAGE = `  --state-dir DIR the server's own records and key (default: $COACHGATE_STATE_DIR, else
                  $XDG_STATE_HOME/coachgate, else ~/.local/state/coachgate).
  --sandbox MODE  required | auto | off: the least sandbox any run of the Player's code gets; stricter
                  than the base config's coachgate.sandbox.mode only (docs/sandbox.md).`;

export interface StateCommandOptions {
  task?: string;
  base?: string;
  worktree?: string;
}

/**
 * `key …` and `task …`: what only a person at a shell may do (never an MCP tool). Returns the exit code:
 * 0 done, 2 a usage or caller mistake (message on stderr).
 */
export async function runStateCommand(
  words: string[],
  options: StateCommandOptions,
  print: (text: string) => void,
): Promise<number> {
  const [command, action, ...extra] = words;
  try {
    if (extra.length > 0) throw new CallerError(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (command === 'key' && action === 'init') {
      const { created, key } = await initKey();
      print(
        `${created ? 'created' : 'kept the existing'} key ${key.key_id} (${privateKeyPath()})\n${key.public_key}`,
      );
      return 0;
    }
    if (command === 'key' && action === 'show') {
      const key = await existingSigningKey();
      if (!key)
        throw new CallerError(
          `No signing key in ${stateRoot()} yet.`,
          'Run `coachgate key init` (coachgate serve also creates it at start).',
        );
      print(key.public_key);
      return 0;
    }
    if (command === 'task' && action === 'pin-base') {
      if (!options.task || !options.base)
        throw new CallerError('task pin-base needs --task ID and --base REF');
      const { previous, pinned, records_moved_to } = await repinBase(
        path.resolve(options.worktree ?? '.'),
        options.task,
        options.base,
      );
      print(
        `${options.task}: base pinned to ${pinned.commit} (${pinned.source})${previous && previous !== pinned.commit ? `, was ${previous}` : ''}${records_moved_to ? `\nthe old repository's records of ${options.task} were moved to ${records_moved_to}` : ''}`,
      );
      return 0;
    }
    throw new CallerError(
      `unknown command ${JSON.stringify([command, action].filter(Boolean).join(' '))}`,
    );
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    process.stderr.write(`coachgate ${command}: ${error.message}\n`);
    return 2;
  }
}

/** Removes `--state-dir DIR` and `--sandbox MODE` (or their `=` forms) from argv and applies them. */
export function takeGlobalOptions(argv: string[]): string[] {
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (word === '--sandbox' || word.startsWith('--sandbox=')) {
      // Like --state-dir, for every command that runs code: only ever stricter than the base config.
      const inline = word.startsWith('--sandbox=');
      const value = inline ? word.slice('--sandbox='.length) : argv[index + 1];
      try {
        requireSandboxAtLeast(parseSandboxMode(value));
      } catch (error) {
        throw new CallerError((error as Error).message);
      }
      if (!inline) index += 1;
    } else if (word === '--state-dir') {
      const directory = argv[index + 1];
      if (directory === undefined || directory.startsWith('-'))
        throw new CallerError('--state-dir needs a directory');
      useStateDirectory(directory);
      index += 1;
    } else if (word.startsWith('--state-dir=')) {
      useStateDirectory(word.slice('--state-dir='.length));
    } else {
      rest.push(word);
    }
  }
  return rest;
}
