import type { ApprovalRequest } from '@stepwise/shared';

/**
 * Thrown by `ctx.requestApproval()` when the step has no recorded approval: the runner moves the
 * job to `waiting` (needs_approval) instead of treating it as a failure.
 */
export class ApprovalNeeded extends Error {
  constructor(readonly request: ApprovalRequest) {
    super(`approval needed: ${request.action}`);
    this.name = 'ApprovalNeeded';
  }
}
