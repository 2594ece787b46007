import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Principal } from '@stepwise/shared';
import type { McpServerDeps } from './mcp-server.js';
import { createMcpServer } from './mcp-server.js';

/** MCP over stdin/stdout for local clients. stdout belongs to the protocol: logs go to stderr. */
export async function startStdio(deps: McpServerDeps, principal: Principal, onClose: () => void): Promise<void> {
  const server = createMcpServer(deps, principal);
  const transport = new StdioServerTransport();
  transport.onclose = onClose;
  await server.connect(transport);
}
