import { describe, expect, it } from 'vitest';
import { connect } from './helpers/mcp.js';

describe('tool contracts', () => {
  it('match the checked-in snapshot, so every contract change is deliberate (update with `npx vitest -u`)', async () => {
    const { client, close } = await connect({ roots: ['/'] });
    const { tools } = await client.listTools();
    await close();
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot(
      './__snapshots__/tool-contracts.json',
    );
  });

  it('declare an output schema and all four annotations on every tool', async () => {
    const { client, close } = await connect({ roots: ['/'] });
    const { tools } = await client.listTools();
    await close();
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      for (const hint of [
        'readOnlyHint',
        'destructiveHint',
        'idempotentHint',
        'openWorldHint',
      ] as const) {
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(40);
    }
  });
});
