import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI as cli } from '../helpers/cli.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, dataOf } from '../helpers/mcp.js';
import { hasPytest } from '../helpers/python-task.js';

const TASK = 'TASK-001';
let repo: TempRepo;
afterEach(() => repo?.remove());

/**
 * The 50,000-file repository of issue 60, scaled down: 3,000 test data files against a server whose
 * descriptor limit is 256 (`ulimit -n`). Reading every base test file at once held one descriptor
 * each, and the run's spawn then failed with EMFILE and no handler, ending the server.
 */
describe('a repository with more files than the server has descriptors', () => {
  it.skipIf(!hasPytest)(
    'run_independent_tests passes, and the server answers the next call',
    async () => {
      repo = makeRepo({
        'pytest.ini': '[pytest]\npythonpath = .\ntestpaths = tests\n',
        'app/__init__.py': '',
        'app/text.py': 'def slug(text):\n    return text.lower()\n',
        'tests/test_text.py':
          'from app.text import slug\n\n\ndef test_slug():\n    assert slug("A") == "a"\n',
        [`.guardkit/tasks/backlog/${TASK}.md`]: `---\nid: ${TASK}\ntitle: x\n---\n## Acceptance Criteria\n- [ ] AC-001: x\n`,
      });
      for (let index = 0; index < 3_000; index += 1) {
        const file = path.join(repo.dir, 'tests/data', `d${index % 6}`, `f${index}.txt`);
        if (index < 6) mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, `data ${index}\n`);
      }
      repo.commit('test data');
      // The Player's turn on its task branch: the base's tests then judge the Player's code.
      repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
      repo.write(
        'app/text.py',
        'def slug(text):\n    return text.lower()\n\n\ndef shout(text):\n    return text.upper()\n',
      );
      const server = [cli, '--root', repo.dir, '--state-dir', process.env.COACHGATE_STATE_DIR!];
      const client = new Client({ name: 'descriptor-limit-test', version: '0.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: 'sh',
          args: ['-c', 'ulimit -n 256 && exec "$0" "$@"', process.execPath, ...server],
          stderr: 'ignore',
        }),
      );
      try {
        const task = { worktree: repo.dir, task_id: TASK };
        const run = dataOf(await callTool(client, 'run_independent_tests', task));
        expect(run).toMatchObject({ status: 'passed', counts: { passed: 1 } });
        expect(dataOf(await callTool(client, 'task_status', task)).task_id).toBe(TASK);
      } finally {
        await client.close();
      }
    },
  );
});
