import { parseArgs } from 'node:util';
import {
  appendAudit,
  canonicalJson,
  createJobQueue,
  createRedis,
  enqueueJob,
  getJob,
  JobIdSchema,
  reopenFailedJob,
  sha256Hex,
  TenantIdSchema,
} from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { CliError } from '../cli-error.js';
import { openMigratedDb } from '../db.js';
import { out } from '../output.js';

export const JOBS_RETRY_USAGE = `stepwise jobs retry <jobId> --tenant T [--note TEXT]

  Re-runs a failed job from the step that failed (like the retry_job tool): succeeded steps keep
  their checkpoints, re-run steps get fresh idempotency keys. Recorded in the job history and the
  audit log as the operator "cli". Needs REDIS_URL to dispatch it (the sweeper does otherwise).`;

export async function jobsRetryCommand(config: CliConfig, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { tenant: { type: 'string' }, note: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new CliError(`name exactly one job.\n\n${JOBS_RETRY_USAGE}`);
  const jobId = JobIdSchema.safeParse(positionals[0]);
  if (!jobId.success) throw new CliError(`"${positionals[0]}" is not a job id (job_…)`);
  const tenant = TenantIdSchema.safeParse(values.tenant);
  if (!tenant.success) throw new CliError(`--tenant is required: the job's tenant.\n\n${JOBS_RETRY_USAGE}`);

  const { db, close } = await openMigratedDb(config.DATABASE_URL);
  try {
    const reopened = await db.transaction(async (tx) => {
      const r = await reopenFailedJob(tx, { tenantId: tenant.data, jobId: jobId.data, by: 'cli', note: values.note ?? null });
      if (r) {
        const args = { jobId: jobId.data, note: values.note };
        await appendAudit(tx, {
          tenantId: tenant.data,
          principalId: 'cli',
          clientName: 'stepwise-cli',
          action: 'retry_job',
          targetJobId: jobId.data,
          argsDigest: sha256Hex(canonicalJson(args)),
          argsRedacted: args,
          outcome: 'success',
        });
      }
      return r;
    });
    if (!reopened) {
      const job = await getJob(db, tenant.data, jobId.data);
      throw new CliError(job ? `job ${job.id} is ${job.status}; only a failed job can be retried` : `no job ${jobId.data} in tenant "${tenant.data}"`);
    }
    const redis = createRedis(config.REDIS_URL);
    const queue = createJobQueue(redis, config.STEPWISE_QUEUE_PREFIX);
    try {
      await enqueueJob(queue, reopened.dispatchId, { jobId: reopened.id, tenantId: reopened.tenantId });
      out(`Retrying ${reopened.id} from step "${reopened.currentStep ?? '?'}" (attempt group ${reopened.attemptGroup}).`);
    } catch (e: unknown) {
      out(`Reopened ${reopened.id}; dispatch failed (${e instanceof Error ? e.message : String(e)}), the sweeper will dispatch it.`);
    } finally {
      await queue.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
    }
  } finally {
    await close();
  }
}
