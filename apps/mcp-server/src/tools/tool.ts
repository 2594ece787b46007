import type { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { CallMeta, JobRegistry, JobService, Principal } from '@stepwise/shared';

export interface ToolContext {
  principal: Principal;
  meta: CallMeta;
  service: JobService;
  registry: JobRegistry;
  /** Sends `notifications/progress` when the caller passed a progressToken; otherwise a no-op. */
  progress(progress: number, total: number | undefined, message: string | undefined): Promise<void>;
  /** Fires when the client cancels the request or disconnects. */
  signal: AbortSignal;
}

/** One MCP tool: schemas (the source of its JSON Schemas), words for the model, and a handler. */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Overrides the input JSON Schema derived from `input` (start_job adds each type's schema). */
  inputJsonSchema?(registry: JobRegistry): Record<string, unknown>;
  handler(args: z.output<I>, ctx: ToolContext): Promise<CallToolResult>;
}

/** Keeps each tool's handler typed against its own schemas while the list is heterogeneous. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(t: ToolDefinition<I, O>): ToolDefinition {
  return t as unknown as ToolDefinition;
}
