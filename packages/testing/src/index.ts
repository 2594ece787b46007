export type { Proc, Stack, TransportKind } from './stack.js';
export { bearer, connectHttpClient, spawnNode, startStack, sc, CLI_MAIN, SERVER_MAIN, WORKER_MAIN } from './stack.js';
export { E2E_SCOPES, mintApiKey } from './api-keys.js';
export type { EffectRecord, EffectServer } from './effect-server.js';
export { startEffectServer } from './effect-server.js';
export { createTestDatabase, uniquePrefix } from '@stepwise/shared/testing';
export type { TestDatabase } from '@stepwise/shared/testing';
export type { TcpProxy } from './tcp-proxy.js';
export { startTcpProxy } from './tcp-proxy.js';
