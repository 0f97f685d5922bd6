import path from 'node:path';
import { parseOptions, type Print } from './options.js';
import { CallerError } from '../errors/errors.js';
import { assertRepository } from '../repo/git.js';
import { startDashboard } from '../dashboard/server.js';

import { DEFAULT_PORT } from '../dashboard/usage.js';

/** Serves until SIGINT/SIGTERM; exit 2 for a caller mistake (bad port, not a repository). */
export async function uiCommand(args: string[], print: Print): Promise<number> {
  let running;
  try {
    const { values, positionals } = parseOptions(args, {
      root: { type: 'string' },
      port: { type: 'string' },
    });
    if (positionals.length > 0)
      throw new CallerError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CallerError(`--port must be a number from 0 to 65535, not ${values.port}`);
    const root = path.resolve(values.root ?? '.');
    await assertRepository(root);
    running = await startDashboard(root, port).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') throw error;
      throw new CallerError(`port ${port} is in use: pass another --port (0: any free port)`);
    });
    print(running.url);
    process.stderr.write(`coachgate ui: read-only dashboard of ${root}; Ctrl-C stops it\n`);
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    process.stderr.write(`coachgate ui: ${error.message}\n`);
    return 2;
  }
  const server = running;
  await new Promise<void>((resolve) => {
    const stop = () => void server.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}
