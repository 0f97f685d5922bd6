#!/usr/bin/env node
// The baseline for start-up and round trips: a bare MCP SDK server over stdio with one echo tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'echo', version: '0.0.0' });
server.registerTool(
  'echo',
  {
    description: 'Echoes its text',
    inputSchema: { text: z.string() },
    outputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
);
await server.connect(new StdioServerTransport());
