import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job } from '../../job/job.js';
import type { JobStatus } from '../../job/status.js';
import type { JobId, TenantId } from '../../ids.js';
import { jobFromRow } from '../rows.js';
import { rowsOf } from '../sql-helpers.js';

export interface ListJobsArgs {
  tenantId: TenantId;
  status?: JobStatus | undefined;
  type?: string | undefined;
  limit: number;
  /** Keyset cursor: the last id of the previous page (ids sort by creation time). */
  before?: JobId | undefined;
}

/** Contract: newest first, one page plus a flag for whether more exist. Tenant-scoped. */
export async function listJobs(db: DbOrTx, a: ListJobsArgs): Promise<{ jobs: Job[]; hasMore: boolean }> {
  const rows = rowsOf(
    await db.execute(sql`
      select * from jobs
      where tenant_id = ${a.tenantId}
        ${a.status ? sql`and status = ${a.status}` : sql``}
        ${a.type ? sql`and type = ${a.type}` : sql``}
        ${a.before ? sql`and id < ${a.before}` : sql``}
      order by id desc
      limit ${a.limit + 1}`),
  );
  return { jobs: rows.slice(0, a.limit).map(jobFromRow), hasMore: rows.length > a.limit };
}
