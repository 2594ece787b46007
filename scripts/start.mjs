#!/usr/bin/env node
// Quick start: runs the MCP server (Streamable HTTP) and one worker side by side, with their
// logs interleaved and prefixed. Ctrl-C (or SIGTERM) stops both gracefully.
// Production runs them as separate processes (see infra/).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const procs = [
  ['mcp-server', 'apps/mcp-server/dist/main.js'],
  ['worker', 'apps/worker/dist/main.js'],
];

const children = procs.map(([name, entry]) => {
  const child = spawn(process.execPath, [entry], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${name}] ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    process.stdout.write(`[${name}] exited (${signal ?? code})\n`);
    if (!stopping) stop(code ?? 1);
  });
  return child;
});

const port = process.env.STEPWISE_HTTP_PORT ?? '3000';
const host = process.env.STEPWISE_HTTP_HOST ?? '127.0.0.1';
const stdioConfig = {
  mcpServers: {
    stepwise: {
      command: process.execPath,
      args: [join(root, 'apps/mcp-server/dist/main.js'), '--stdio'],
      // stdio runs as a principal named here (no key needed: the client starts the process itself).
      env: {
        DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stepwise',
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        STEPWISE_TENANT: process.env.STEPWISE_TENANT ?? 'local',
        STEPWISE_PRINCIPAL: process.env.STEPWISE_PRINCIPAL ?? 'local-operator',
      },
    },
  },
};
const cli = `node ${join(root, 'apps/cli/dist/main.js')}`;
process.stdout.write(
  `\nStepwise is starting: MCP endpoint http://${host}:${port}/mcp (health: /healthz, /readyz).\n` +
    `HTTP clients need an API key (Authorization: Bearer ...). On the very first start the server\n` +
    `prints one below, once, with a client config to paste. Make more (or a new one) with:\n` +
    `  ${cli} keys create --tenant local --name <who> --scopes jobs:read,jobs:write,jobs:cancel,jobs:approve\n` +
    `For a stdio client (Claude Desktop, Cursor), add this to its MCP config while this keeps running:\n` +
    `${JSON.stringify(stdioConfig, null, 2)}\nCtrl-C stops.\n\n`,
);

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 15_000).unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
