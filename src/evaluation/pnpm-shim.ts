/** What a `.bin` shim pnpm wrote runs: node on a file, with NODE_PATH set to directories. */
export interface PnpmShim {
  /** The file node runs, relative to the shim's directory (`../.pnpm/x@1/node_modules/x/cli.js`). */
  target: string;
  /** The absolute directories the shim puts on NODE_PATH. */
  nodePath: string[];
}

/**
 * pnpm links a package's commands as shell scripts (its cmd-shim), not as symbolic links: each one
 * sets NODE_PATH and runs `node` on the command's file. Read by the script's whole text, every line
 * of the template in place: a script that does anything else is not one pnpm wrote.
 */
export function pnpmShim(text: string): PnpmShim | undefined {
  const match = SHIM.exec(text);
  if (!match) return undefined;
  const [, nodePath, nodePathAgain, target, targetAgain] = match;
  if (nodePath !== nodePathAgain || target !== targetAgain) return undefined;
  return { target: target!, nodePath: nodePath!.split(':') };
}

const QUOTED = '([^"$`\\\\\\n]+)';
const SHIM = new RegExp(
  [
    '^#!/bin/sh',
    'basedir=\\$\\(dirname "\\$\\(echo "\\$0" \\| sed -e \'s,\\\\\\\\,/,g\'\\)"\\)',
    '',
    'case `uname` in',
    '    \\*CYGWIN\\*\\|\\*MINGW\\*\\|\\*MSYS\\*\\)',
    '        if command -v cygpath > /dev/null 2>&1; then',
    '            basedir=`cygpath -w "\\$basedir"`',
    '        fi',
    '    ;;',
    'esac',
    '',
    'if \\[ -z "\\$NODE_PATH" \\]; then',
    `  export NODE_PATH="${QUOTED}"`,
    'else',
    `  export NODE_PATH="${QUOTED}:\\$NODE_PATH"`,
    'fi',
    'if \\[ -x "\\$basedir/node" \\]; then',
    `  exec "\\$basedir/node"  "\\$basedir/${QUOTED}" "\\$@"`,
    'else',
    `  exec node  "\\$basedir/${QUOTED}" "\\$@"`,
    'fi',
    '$',
  ].join('\\n'),
);
