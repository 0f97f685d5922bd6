import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A real git repository in a temp dir, on branch `main`, for tests that exercise git-backed behaviour. */
export interface TempRepo {
  dir: string;
  write(file: string, content: string): void;
  git(...args: string[]): string;
  commit(message: string): string;
  remove(): void;
}

export function makeRepo(files: Record<string, string> = {}, prefix = 'coachgate-repo-'): TempRepo {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Test',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 'Test',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    }).trim();
  git('init', '-q', '-b', 'main');
  const repo: TempRepo = {
    dir,
    write(file, content) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), content);
    },
    git,
    commit(message) {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (const [file, content] of Object.entries(files)) repo.write(file, content);
  if (Object.keys(files).length > 0) repo.commit('base');
  return repo;
}

export const SAMPLE_TASK = `---
id: TASK-001
title: Greeting helper
status: in_progress
task_type: feature
depends_on: [TASK-000]
---
# Greeting helper

## Description
Add a greeting.

## Acceptance Criteria
- [ ] AC-001: \`greet(name)\` returns "Hello, <name>!"
- [x] **AC-002** Empty names raise a ValueError
  with a helpful message
- [ ] Tests cover both cases

## Notes
- [ ] not a criterion
`;
