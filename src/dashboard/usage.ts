/** Kept apart from the command so `--help` loads no HTTP code. */
export const DEFAULT_PORT = 7480;

export const UI_USAGE = `  coachgate ui [--root DIR] [--port N]             read-only web dashboard of DIR's tasks, turns, runs
                                                   and verdicts on http://127.0.0.1:N/ (default ${DEFAULT_PORT};
                                                   0: any free port); prints the URL first; Ctrl-C stops`;
