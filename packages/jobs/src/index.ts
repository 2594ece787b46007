import type { JobType } from '@stepwise/shared';
import { JobRegistry } from '@stepwise/shared';
import { demoSteps } from './demo-steps/index.js';
import { filesIndex } from './files-index/index.js';

export { demoSteps, DemoStepsInputSchema } from './demo-steps/index.js';
export type { DemoStepsInput, DemoStepOutput } from './demo-steps/index.js';
export { filesIndex } from './files-index/index.js';

/** Every built-in job type. Server and workers build their registry from the same list. */
export const BUILTIN_JOB_TYPES: readonly JobType[] = [demoSteps, filesIndex];

export function builtinRegistry(): JobRegistry {
  return new JobRegistry(BUILTIN_JOB_TYPES);
}
