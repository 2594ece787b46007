import type { ToolDefinition } from './tool.js';
import { startJobTool } from './start-job.js';
import { getJobStatusTool } from './get-job-status.js';
import { cancelJobTool } from './cancel-job.js';
import { listJobsTool } from './list-jobs.js';
import { listJobTypesTool } from './list-job-types.js';
import { respondToJobTool } from './respond-to-job.js';
import { retryJobTool } from './retry-job.js';
import { getJobHistoryTool } from './get-job-history.js';

export type { ToolContext, ToolDefinition } from './tool.js';

export const TOOLS: readonly ToolDefinition[] = [startJobTool, getJobStatusTool, cancelJobTool, listJobsTool, listJobTypesTool, respondToJobTool, retryJobTool, getJobHistoryTool];
