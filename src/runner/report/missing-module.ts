/** Modules that test output says could not be found or imported (Python and Node). */

import { quoteLine } from './locate.js';

export interface MissingModule {
  /** As written in the error: `app.services`, `psycopg2`, `./nothere`, `@scope/pkg/sub`. */
  specifier: string;
  language: 'python' | 'node';
  /** The output line that names it, trimmed. */
  line: string;
}

export type ModuleOwner =
  /** The test runner itself: the environment lacks it. */
  | 'runner'
  /** A client library for a database, cache, queue or cloud service: the test needs that service. */
  | 'service_client'
  /** Part of the repository (a path, or a top-level name the repository holds). */
  | 'first_party'
  /** A first-party top-level package that exists but is not importable: the import path is wrong. */
  | 'first_party_root'
  | 'third_party';

const MISSING_MODULE_PATTERNS: ReadonlyArray<[RegExp, MissingModule['language']]> = [
  [/No module named '([^']+)'/, 'python'],
  // `python -m pytest` without pytest installed: unquoted.
  [/No module named ([\w.]+)/, 'python'],
  // The module exists but lacks the name: the module is what to look at.
  [/cannot import name '[^']+' from '([\w.]+)'/, 'python'],
  [/Cannot find (?:module|package) '([^']+)'/, 'node'],
  // vite/vitest resolving an import.
  [/Failed to load url (\S+)/, 'node'],
];
const ANY_MISSING_MODULE =
  /No module named|cannot import name|Cannot find (?:module|package)|Failed to load url/;

/** Every missing module the output names, in output order, each specifier once. */
export function missingModules(lines: readonly string[]): MissingModule[] {
  const found: MissingModule[] = [];
  for (const line of lines) {
    if (!ANY_MISSING_MODULE.test(line)) continue;
    for (const [pattern, language] of MISSING_MODULE_PATTERNS) {
      const specifier = pattern.exec(line)?.[1];
      if (specifier && !found.some((module) => module.specifier === specifier)) {
        found.push({ specifier, language, line: quoteLine(line) });
        break;
      }
    }
  }
  return found;
}

const RUNNERS = new Set([
  'pytest',
  '_pytest',
  'pluggy',
  'vitest',
  'jest',
  'mocha',
  'ava',
  'tap',
  'tsx',
  'ts-node',
  '@vitest',
  '@jest',
]);

const SERVICE_CLIENTS = new Set([
  // Python
  'psycopg2',
  'psycopg',
  'asyncpg',
  'aiopg',
  'pymysql',
  'MySQLdb',
  'mysql',
  'cx_Oracle',
  'oracledb',
  'pyodbc',
  'redis',
  'aioredis',
  'pymongo',
  'motor',
  'boto3',
  'botocore',
  'aiobotocore',
  'kafka',
  'aiokafka',
  'confluent_kafka',
  'pika',
  'aio_pika',
  'elasticsearch',
  'cassandra',
  'pymemcache',
  'nats',
  // Node
  'pg',
  'mysql2',
  'mongodb',
  'mongoose',
  'ioredis',
  'kafkajs',
  'amqplib',
  'aws-sdk',
  '@aws-sdk',
  '@elastic',
]);

function isPath(specifier: string): boolean {
  return /^(?:\.{1,2}\/|\/|file:|[A-Za-z]:[\\/])/.test(specifier);
}

/** The installable or importable top-level name: `app.services` → `app`, `@scope/pkg/sub` → `@scope/pkg`, `lodash/fp` → `lodash`. */
export function packageNameOf(module: Pick<MissingModule, 'specifier' | 'language'>): string {
  if (module.language === 'python') return module.specifier.split('.')[0] ?? module.specifier;
  const parts = module.specifier.split('/');
  return (module.specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function isListed(list: ReadonlySet<string>, packageName: string): boolean {
  return list.has(packageName) || list.has(packageName.split('/')[0] ?? packageName);
}

export function ownerOf(module: MissingModule, firstPartyModules: readonly string[]): ModuleOwner {
  // A path into node_modules names an installed package, not a repository file.
  const installedPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module.specifier)?.[1];
  if (isPath(module.specifier) && !installedPackage) return 'first_party';
  const name = packageNameOf({
    specifier: installedPackage ?? module.specifier,
    language: module.language,
  });
  if (isListed(RUNNERS, name)) return 'runner';
  if (isListed(SERVICE_CLIENTS, name)) return 'service_client';
  if (!firstPartyModules.includes(name)) return 'third_party';
  const isPythonTopLevel =
    module.language === 'python' &&
    !/cannot import name/.test(module.line) &&
    module.specifier === name;
  return isPythonTopLevel ? 'first_party_root' : 'first_party';
}
