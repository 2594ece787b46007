import { newJobId } from '@stepwise/shared';
import type { FsBlobStore, ReconcileResult, StepDefinition } from '@stepwise/shared';
import { createTestStepContext } from '../../files-index/testing/step-context.js';
import type { TestStepContext } from '../../files-index/testing/step-context.js';
import { httpRequest } from '../http-request.js';
import { HttpRequestInputSchema, HttpResponseSchema } from '../schemas.js';
import type { HttpRequestInput, HttpResponse } from '../schemas.js';

export interface RequestStepUnderTest extends TestStepContext<HttpRequestInput> {
  input: HttpRequestInput;
  step: StepDefinition<HttpRequestInput, HttpResponse>;
  /** Runs the step the way the runner does: run, then validate the output. */
  run(): Promise<HttpResponse>;
  /** Calls the step's reconcile(); throws when it has none. */
  reconcile(): Promise<ReconcileResult<HttpResponse>>;
}

/** Parses `raw` as job input, plans it, and binds the `request` step to a real StepContext. */
export function requestStepFor(raw: Record<string, unknown>, blobs: FsBlobStore): RequestStepUnderTest {
  const input = HttpRequestInputSchema.parse(raw);
  const step = httpRequest.plan(input)[0] as StepDefinition<HttpRequestInput, HttpResponse> | undefined;
  if (!step) throw new Error('http.request planned no step');
  const t = createTestStepContext({ input, step: step.name, jobId: newJobId(), blobs });
  return {
    ...t,
    input,
    step,
    run: async () => HttpResponseSchema.parse(await step.run(t.ctx)),
    reconcile: async () => {
      if (!step.reconcile) throw new Error('the step has no reconcile()');
      return step.reconcile(t.ctx);
    },
  };
}
