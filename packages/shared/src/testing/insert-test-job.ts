import type { DbOrTx } from '../db/client.js';
import { createJob } from '../db/ops/create-job.js';
import type { Job, PlannedStep } from '../job/job.js';
import { idempotencyHash, requestHash } from '../hash/idempotency-hash.js';
import { newJobId } from '../ids.js';
import type { PrincipalId, TenantId } from '../ids.js';
import type { Db } from '../db/client.js';

let seq = 0;

/**
 * A pending `demo.steps` job created through the real createJob statement (row, event, audit), with
 * a unique input so every call makes a new job. For storage tests that need a job to act on.
 */
export async function insertTestJob(
  db: DbOrTx,
  o: { tenantId: TenantId; principalId?: string; plan: PlannedStep[]; input?: Record<string, unknown> },
): Promise<Job> {
  const input = o.input ?? { steps: o.plan.length, n: seq++, at: Date.now() };
  const principalId = (o.principalId ?? 'alice') as PrincipalId;
  const { job } = await createJob(
    db as Db,
    {
      id: newJobId(),
      tenantId: o.tenantId,
      principalId,
      type: 'demo.steps',
      input,
      idempotencyKey: undefined,
      idempotencyHash: idempotencyHash(o.tenantId, 'demo.steps', input),
      requestHash: requestHash('demo.steps', input),
      dedupWindowMs: 86_400_000,
      plan: o.plan,
      maxAttempts: 3,
      traceId: undefined,
    },
    { tenantId: o.tenantId, principalId, action: 'start_job', outcome: 'success' },
  );
  return job;
}
