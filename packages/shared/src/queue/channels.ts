import type { JobId, TenantId } from '../ids.js';

/** Pub/sub channel names. Every one carries the tenant, so a subscriber can only hear its own. */
export const channels = {
  jobUpdates: (prefix: string, tenantId: TenantId, jobId: JobId) => `${prefix}:t:${tenantId}:job:${jobId}`,
  cancel: (prefix: string, tenantId: TenantId) => `${prefix}:t:${tenantId}:cancel`,
  cancelPattern: (prefix: string) => `${prefix}:t:*:cancel`,
};
