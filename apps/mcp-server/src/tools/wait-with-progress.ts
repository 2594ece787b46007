import type { Job, JobId } from '@stepwise/shared';
import { MAX_WAIT_SECONDS } from '@stepwise/shared';
import type { ToolContext } from './tool.js';

/**
 * Waits up to `waitSeconds` (capped) for the job to finish, forwarding live updates as
 * `notifications/progress` (0–100, never decreasing, as MCP requires).
 */
export async function waitWithProgress(ctx: ToolContext, jobId: JobId, waitSeconds: number | undefined): Promise<Job> {
  const waitMs = Math.min(waitSeconds ?? 0, MAX_WAIT_SECONDS) * 1000;
  let last = -1;
  return ctx.service.wait(
    ctx.principal,
    jobId,
    waitMs,
    (u) => {
      const pct = u.overall === null ? null : Math.round(u.overall * 1000) / 10;
      if (pct === null || pct <= last) return;
      last = pct;
      void ctx.progress(pct, 100, u.progress?.message ?? `${u.status}`).catch(() => undefined);
    },
    ctx.signal,
  );
}
