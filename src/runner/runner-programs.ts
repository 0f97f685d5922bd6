/**
 * Test runners' processes, by their program (`process.argv[1]`: the runner's own file or its `.bin`
 * link), as regular expressions in the preloads' source.
 */
export const MOCHA_PROGRAM = String.raw`/\/mocha\/|\/_?mocha(\.js)?$/`;
/** vitest's child processes that run test files (`pool: 'forks'`, vitest's default, and vmForks). */
export const VITEST_FORK_PROGRAM = String.raw`/\/vitest\/dist\/workers\/(vm)?[Ff]orks\.js$/`;
/** jest's command-line process (not its workers). */
export const JEST_PROGRAM = String.raw`/\/jest(-cli)?\/bin\/jest(\.js)?$|\/\.bin\/jest$/`;
/** jest's worker processes (jest-worker's child), which run test files unless jest runs in band. */
export const JEST_WORKER_PROGRAM = String.raw`/\/jest-worker\//`;
