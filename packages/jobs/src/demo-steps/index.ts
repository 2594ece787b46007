export { demoSteps, DemoStepsInputSchema } from './demo-steps.js';
export type { DemoStepsInput, DemoStepOutput } from './demo-steps.js';
