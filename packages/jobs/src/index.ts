import type { JobType } from '@stepwise/shared';
import { JobRegistry } from '@stepwise/shared';
import { createMcpChainJob, DownstreamRegistry, EMPTY_DOWNSTREAM_CONFIG } from '@stepwise/mcp-chain';
import { demoSteps } from './demo-steps/index.js';
import { filesIndex } from './files-index/index.js';
import { httpRequest } from './http-request/index.js';

export { demoSteps, DemoStepsInputSchema } from './demo-steps/index.js';
export type { DemoStepsInput, DemoStepOutput } from './demo-steps/index.js';
export { filesIndex } from './files-index/index.js';
export { httpRequest, HttpRequestInputSchema, HttpResponseSchema } from './http-request/index.js';
export type { HttpRequestInput, HttpResponse } from './http-request/index.js';

// What the apps need to configure mcp.chain's downstream servers.
export { DOWNSTREAM_ENV_SHAPE, DownstreamRegistry, mergeDownstreamConfigs } from '@stepwise/mcp-chain';
export type { DownstreamConfig, DownstreamRegistryOptions } from '@stepwise/mcp-chain';

/** Every built-in job type that needs no configuration (see builtinRegistry for mcp.chain). */
export const BUILTIN_JOB_TYPES: readonly JobType[] = [demoSteps, filesIndex, httpRequest];

export interface BuiltinRegistryOptions {
  /** The downstream MCP servers `mcp.chain` may call (from config); none when omitted. */
  downstream?: DownstreamRegistry | undefined;
}

/**
 * Every built-in job type, plus `mcp.chain` bound to the given downstream servers (it needs a
 * connection pool, so it cannot sit in the static list). Server and workers build their registry
 * here, each with the same downstream config.
 */
export function builtinRegistry(options: BuiltinRegistryOptions = {}): JobRegistry {
  const downstream = options.downstream ?? new DownstreamRegistry(EMPTY_DOWNSTREAM_CONFIG);
  return new JobRegistry([...BUILTIN_JOB_TYPES, createMcpChainJob(downstream)]);
}
