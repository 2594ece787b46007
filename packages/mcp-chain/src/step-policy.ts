import type { StepEffect } from '@stepwise/shared';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { DownstreamServer } from './downstream-config.js';

/** How a chain asks about approvals: `skip_destructive` opts out of the destructiveHint default only. */
export type ChainApprovals = 'default' | 'skip_destructive';

export interface CallPolicy {
  effect: StepEffect;
  approval: 'required' | 'none';
  /** Whether the tool may destroy data (annotations, with the MCP default for non-read-only tools). */
  destructive: boolean;
}

/**
 * DESIGN §12: replay safety and approval are separate questions, both answered from the
 * downstream tool's annotations and overridable in config.
 *
 * - effect: `readOnlyHint` → none; else `idempotentHint` → idempotent; else unsafe.
 * - destructive: `destructiveHint`, which MCP defines as true when absent on a non-read-only tool.
 * - approval, first match wins: the tool's config override; server `always` → required; server
 *   `never` → none; destructive → required unless the chain says `skip_destructive`; else none.
 */
export function callPolicy(tool: Pick<Tool, 'annotations'>, server: Pick<DownstreamServer, 'approval' | 'tools'>, toolName: string, approvals: ChainApprovals): CallPolicy {
  const a = tool.annotations ?? {};
  const readOnly = a.readOnlyHint === true;
  const destructive = !readOnly && a.destructiveHint !== false;
  const override = server.tools[toolName] ?? {};
  const effect: StepEffect = override.effect ?? (readOnly ? 'none' : a.idempotentHint === true ? 'idempotent' : 'unsafe');
  let approval: CallPolicy['approval'];
  if (override.approval) approval = override.approval;
  else if (server.approval === 'always') approval = 'required';
  else if (server.approval === 'never') approval = 'none';
  else approval = destructive && approvals !== 'skip_destructive' ? 'required' : 'none';
  return { effect, approval, destructive };
}
