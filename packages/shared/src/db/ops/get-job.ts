import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job, StepRecord } from '../../job/job.js';
import type { JobId, TenantId } from '../../ids.js';
import { jobFromRow, stepFromRow } from '../rows.js';
import { rowsOf } from '../sql-helpers.js';

/** Contract: the job if it exists AND belongs to `tenantId`; another tenant's job reads as null. */
export async function getJob(db: DbOrTx, tenantId: TenantId, jobId: JobId): Promise<Job | null> {
  const row = rowsOf(await db.execute(sql`select * from jobs where id = ${jobId} and tenant_id = ${tenantId}`))[0];
  return row ? jobFromRow(row) : null;
}

/** Contract: the job's checkpoints in plan order (empty for an unknown or foreign job). */
export async function getJobSteps(db: DbOrTx, tenantId: TenantId, jobId: JobId): Promise<StepRecord[]> {
  const rows = rowsOf(
    await db.execute(sql`
      select s.* from job_steps s join jobs j on j.id = s.job_id
      where s.job_id = ${jobId} and j.tenant_id = ${tenantId}
      order by s.position`),
  );
  return rows.map(stepFromRow);
}

/** Contract: the job by id regardless of tenant. Workers only: a BullMQ entry names no tenant. */
export async function getJobForWorker(db: DbOrTx, jobId: JobId): Promise<Job | null> {
  const row = rowsOf(await db.execute(sql`select * from jobs where id = ${jobId}`))[0];
  return row ? jobFromRow(row) : null;
}
