import { fileURLToPath } from 'node:url';

/**
 * The package's bin, `bundle/cli.js`, as users run it (`npm run build` makes it; `npm test` builds
 * first). Tests start it as a child rather than `dist/cli.js`: it starts in about two thirds of the
 * time, and every stdio server, scripted agent, hook and `gate` call in the suite starts one.
 */
export const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
