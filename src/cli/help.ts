/**
 * `coachgate <command> --help`: the command's own entries of the full usage, and the options they
 * name, cut from the one usage text every command's entry is written in (no second copy to keep).
 * Undefined when the usage has no entry for `command`.
 */
export function commandHelp(usage: string, command: string): string | undefined {
  const [head = '', options = ''] = usage.split('\nOptions:\n');
  const entries = blocks(head.slice(head.indexOf('\nUsage:\n') + 1), /^ {2}coachgate /).filter(
    (entry) => entryCommand(entry) === command,
  );
  if (entries.length === 0) return undefined;
  const named = blocks(options, /^ {2}-/).filter((option) =>
    optionFlags(option).some((flag) => entries.some((entry) => entry.includes(flag))),
  );
  return [
    'Usage:',
    ...entries,
    ...(named.length > 0 ? ['', 'Options:', ...named] : []),
    '',
    'Run "coachgate --help" for every command.',
  ].join('\n');
}

/** Lines grouped from each line matching `start` to the next (continuation lines stay with it). */
function blocks(text: string, start: RegExp): string[] {
  const found: string[][] = [];
  for (const line of text.split('\n')) {
    if (start.test(line)) found.push([line]);
    else if (found.length > 0 && /^ {3,}\S/.test(line)) found.at(-1)!.push(line);
  }
  return found.map((lines) => lines.join('\n'));
}

/** `coachgate [serve] …` and `coachgate serve …` are both serve; otherwise the first word. */
function entryCommand(entry: string): string {
  const word = entry.trimStart().split(/\s+/)[1] ?? '';
  return word === '[serve]' ? 'serve' : word;
}

function optionFlags(option: string): string[] {
  const first = option.split('\n')[0]!;
  return [...first.matchAll(/--[a-z-]+/g)].map((match) => match[0]);
}
