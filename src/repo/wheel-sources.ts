import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipNames } from './zip-entries.js';

/** A wheel pip could install a distribution from, offline. */
export interface PublishedWheel {
  file: string;
  /** The sha256 (hex) the index publishes for it (`#sha256=` of its link), when it gives one. */
  sha256?: string;
}

/** pip's settings that name where wheels come from (`find-links`, index URLs). */
const SOURCE_KEYS = /^(?:find[-_]links|index[-_]url|extra[-_]index[-_]url)$/;

/**
 * The wheels of `name==version` that pip itself would install offline, by its own protocol: the
 * local `find-links` directories and `file://` indexes its configuration and environment name (an
 * index's project page, `<index>/<name>/`, with the hash its links publish), the wheels the
 * interpreter bundles for ensurepip (pip and setuptools in a fresh venv), and the wheels pip's HTTP
 * cache downloaded (`http-v2/…/*.body`). A remote index is not fetched.
 */
export async function publishedWheels(
  name: string,
  version: string,
  virtualenv: string,
): Promise<PublishedWheel[]> {
  const project = normalized(name);
  const matches = (file: string) => {
    const [distribution, release] = path.basename(file).split('-');
    return normalized(distribution ?? '') === project && release === version;
  };
  const found: PublishedWheel[] = [];
  for (const source of await pipSources()) {
    found.push(...(await indexPage(source, project)).filter((wheel) => matches(wheel.file)));
    found.push(...(await wheelsIn(source)).filter(matches).map((file) => ({ file })));
  }
  found.push(...(await bundledWheels(virtualenv)).filter(matches).map((file) => ({ file })));
  const cached = await cachedDownloads();
  found.push(...(cached.get(`${project}-${version}`) ?? []).map((file) => ({ file })));
  return found;
}

/** PEP 503 name normalisation. */
export function normalized(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

let sources: Promise<string[]> | undefined;

/** Local directories pip's configuration and environment name as wheel sources, read once. */
function pipSources(): Promise<string[]> {
  sources ??= (async () => {
    const home = os.homedir();
    const xdgConfig = process.env.XDG_CONFIG_HOME ?? path.join(home, '.config');
    const xdgDirs = (process.env.XDG_CONFIG_DIRS ?? '/etc/xdg').split(':');
    const files = [
      '/etc/pip.conf',
      ...xdgDirs.map((dir) => path.join(dir, 'pip', 'pip.conf')),
      path.join(home, '.pip', 'pip.conf'),
      path.join(xdgConfig, 'pip', 'pip.conf'),
      ...(process.env.PIP_CONFIG_FILE ? [process.env.PIP_CONFIG_FILE] : []),
    ];
    const values = (await Promise.all(files.map((file) => readFile(file, 'utf8').catch(() => ''))))
      .flatMap(configuredSources)
      .concat(
        ['PIP_FIND_LINKS', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL'].flatMap((key) =>
          (process.env[key] ?? '').split(/\s+/),
        ),
      );
    return [...new Set(values.map(localDirectory).filter((dir): dir is string => !!dir))];
  })();
  return sources;
}

/** The values of the source settings in a pip.conf (INI, values may continue on indented lines). */
function configuredSources(text: string): string[] {
  const values: string[] = [];
  let inSource = false;
  for (const line of text.split('\n')) {
    if (/^\s*[#;]/.test(line) || /^\s*\[/.test(line)) {
      inSource = false;
      continue;
    }
    const setting = /^([\w-]+)\s*=\s*(.*)$/.exec(line);
    if (setting) {
      inSource = SOURCE_KEYS.test(setting[1]!);
      if (inSource) values.push(...setting[2]!.split(/\s+/));
    } else if (inSource && /^\s+\S/.test(line)) values.push(...line.trim().split(/\s+/));
  }
  return values.filter(Boolean);
}

/** A source on this machine: a directory path or a `file://` URL; undefined for a remote index. */
function localDirectory(source: string): string | undefined {
  if (source.startsWith('file:')) {
    try {
      return fileURLToPath(source);
    } catch {
      return undefined;
    }
  }
  return path.isAbsolute(source) ? source : undefined;
}

async function wheelsIn(directory: string): Promise<string[]> {
  const names = await readdir(directory).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.whl')).map((name) => path.join(directory, name));
}

/** The wheels a simple index's project page links to (`<index>/<project>/index.html`). */
async function indexPage(index: string, project: string): Promise<PublishedWheel[]> {
  const page = path.join(index, project);
  const html = await readFile(path.join(page, 'index.html'), 'utf8').catch(() => '');
  const wheels: PublishedWheel[] = [];
  for (const match of html.matchAll(/href\s*=\s*"([^"#]+\.whl)(?:#sha256=([0-9a-f]{64}))?/gi)) {
    const target = decodeURIComponent(match[1]!);
    const file = target.startsWith('file:')
      ? fileURLToPath(target)
      : /^[a-z]+:/i.test(target)
        ? undefined
        : path.resolve(page, target);
    if (file) wheels.push({ file, ...(match[2] ? { sha256: match[2] } : {}) });
  }
  return wheels;
}

/** ensurepip's wheels of the interpreter the virtualenv was made from (`home` in pyvenv.cfg). */
async function bundledWheels(virtualenv: string): Promise<string[]> {
  const config = await readFile(path.join(virtualenv, 'pyvenv.cfg'), 'utf8').catch(() => '');
  const home = /^home\s*=\s*(.+?)\s*$/m.exec(config)?.[1];
  if (!home) return [];
  const lib = path.join(home, '..', 'lib');
  const versions = (await readdir(lib).catch(() => [] as string[])).filter((name) =>
    /^python3\.\d+$/.test(name),
  );
  const found = await Promise.all(
    versions.map((version) => wheelsIn(path.join(lib, version, 'ensurepip', '_bundled'))),
  );
  return found.flat();
}

let downloads: Promise<Map<string, string[]>> | undefined;

/**
 * The wheels in pip's HTTP cache by `<project>-<version>`, from their `.dist-info/` member: the
 * cache names bodies by URL hash, not by what they hold. Read once per server process.
 */
function cachedDownloads(): Promise<Map<string, string[]>> {
  downloads ??= (async () => {
    const cache =
      process.env.PIP_CACHE_DIR ??
      path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'pip');
    const found = new Map<string, string[]>();
    const entries = await readdir(path.join(cache, 'http-v2'), { recursive: true }).catch(
      () => [] as string[],
    );
    for (const entry of entries.filter((name) => name.endsWith('.body'))) {
      const file = path.join(cache, 'http-v2', entry);
      const bytes = await readFile(file).catch(() => undefined);
      if (!bytes || bytes.length < 4 || bytes.readUInt32LE(0) !== 0x04034b50) continue;
      const info = zipNames(bytes)
        .map((name) => /^([^/]+)-([^/-]+)\.dist-info\/RECORD$/.exec(name))
        .find(Boolean);
      if (!info) continue;
      const key = `${normalized(info[1]!)}-${info[2]!}`;
      found.set(key, [...(found.get(key) ?? []), file]);
    }
    return found;
  })();
  return downloads;
}
