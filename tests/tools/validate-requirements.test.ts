import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

let repo: TempRepo | undefined;
afterEach(() => repo?.remove());

const task = (criteria: string[]) =>
  `---\nid: TASK-001\ntitle: Greeting\n---\n## Acceptance Criteria\n${criteria.map((text, index) => `- [ ] AC-00${index + 1}: ${text}`).join('\n')}\n`;

describe('validate_requirements summary', () => {
  it('counts its criteria in words that fit the number', async () => {
    for (const [criteria, said] of [
      [['greet(name) greets'], 'The one criterion is met.'],
      [['greet(name) greets', 'greet is exported'], 'All 2 criteria met.'],
    ] as const) {
      repo?.remove();
      repo = makeRepo({
        '.guardkit/tasks/TASK-001.md': task([...criteria]),
        'src/greet.js': 'export const greet = (name) => `Hello, ${name}!`;\n',
      });
      const { client, close } = await connect({ roots: [repo.dir] });
      const result = await callTool(client, 'validate_requirements', {
        worktree: repo.dir,
        task_id: 'TASK-001',
        evidence: criteria.map((_, index) => ({
          criterion: `AC-00${index + 1}`,
          file: 'src/greet.js',
          line: 1,
        })),
      });
      await close();
      expect(textOf(result)).toBe(said);
    }
  });
});
