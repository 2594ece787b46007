export type { DownstreamAuth, DownstreamConfig, DownstreamServer, ToolOverride } from './downstream-config.js';
export {
  DOWNSTREAM_ENV_SHAPE,
  DownstreamConfigSchema,
  DownstreamServerSchema,
  EMPTY_DOWNSTREAM_CONFIG,
  mergeDownstreamConfigs,
} from './downstream-config.js';
export type { CallOptions, DownstreamRegistryOptions, RequestId } from './downstream-registry.js';
export { DownstreamRegistry } from './downstream-registry.js';
export type { ChainStep, McpCallOutput, McpChainInput, PlannedCall } from './chain-schemas.js';
export { ChainStepSchema, McpCallOutputSchema, McpChainInputSchema, PlannedCallSchema } from './chain-schemas.js';
export type { CallPolicy, ChainApprovals } from './step-policy.js';
export { callPolicy } from './step-policy.js';
export type { ClassifiedCallError } from './call-errors.js';
export { classifyCallError, classifyToolErrorResult } from './call-errors.js';
export type { PathKey, Segment, TemplateRef } from './template.js';
export { parseTemplate, resolveTemplates, TemplateSyntaxError, UnresolvedTemplateError } from './template.js';
export { redactSecrets } from './redact.js';
export { checkArguments, diffSchemas, schemaHash } from './schema-check.js';
export { createMcpChainJob } from './mcp-chain.js';
