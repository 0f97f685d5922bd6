/** What a yarn.lock (v1) entry says of one resolved package. */
export interface YarnLocked {
  version: string;
  integrity?: string;
}

/**
 * The entries of a yarn 1 lockfile, by `name@version` as node_modules installs them (`@s/b@1.2.3`).
 * An entry's key lists the ranges it resolves (`"a@^1", a@~1.2:`); an alias (`x@npm:y@^1`) is
 * installed under its own name, so the key's first name is kept. yarn 2+ (YAML with `__metadata`)
 * and anything unreadable give no entries: no integrity, so nothing is verified by it.
 */
export function yarnLockEntries(text: string): Map<string, YarnLocked> {
  const entries = new Map<string, YarnLocked>();
  if (!/^# yarn lockfile v1$/m.test(text)) return entries;
  let names: string[] = [];
  let current: Partial<YarnLocked> = {};
  const flush = () => {
    if (current.version)
      for (const name of names)
        entries.set(`${name}@${current.version}`, {
          version: current.version,
          ...(current.integrity ? { integrity: current.integrity } : {}),
        });
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^\S.*:$/.test(line) && !line.startsWith('#')) {
      flush();
      names = [...new Set(line.slice(0, -1).split(/,\s*/).map(nameOfSpecifier))];
      current = {};
      continue;
    }
    const field = /^ {2}(version|integrity) "?([^"\s]+)"?$/.exec(line);
    if (field) current[field[1] as 'version' | 'integrity'] = field[2]!;
  }
  flush();
  return entries;
}

/** `"@s/b@^1.0.0"` → `@s/b`; `a@npm:b@^2` → `a`. */
function nameOfSpecifier(specifier: string): string {
  const bare = specifier.trim().replace(/^"|"$/g, '');
  const at = bare.indexOf('@', bare.startsWith('@') ? 1 : 0);
  return at < 0 ? bare : bare.slice(0, at);
}
