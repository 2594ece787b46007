import { createLogger, unsafeCast } from '@stepwise/shared';
import type { ApprovalRequest, FsBlobStore, JobId, StepContext } from '@stepwise/shared';

/** One `ctx.progress` call, as a test sees it. */
export interface ProgressCall {
  done: number;
  total: number | null;
  message: string | undefined;
}

export interface TestStepContext<I> {
  ctx: StepContext<I>;
  /** Aborts `ctx.signal`. */
  controller: AbortController;
  progress: ProgressCall[];
  /** The last value given to `saveCursor` (JSON round-tripped, like the job store), else the initial cursor. */
  cursor(): unknown;
  /** Every value given to `saveCursor`, in order. */
  savedCursors: unknown[];
}

export interface TestStepContextOptions<I> {
  input: I;
  step: string;
  jobId: JobId;
  blobs: FsBlobStore;
  outputs?: Readonly<Record<string, unknown>>;
  cursor?: unknown;
  /** Runs after each progress call is recorded, e.g. to abort after N files. */
  onProgress?(call: ProgressCall, controller: AbortController): void;
}

const log = createLogger({ name: 'test', level: 'silent' });

/** A fake-free StepContext for unit tests: a real blob store on disk, a real AbortController. */
export function createTestStepContext<I>(options: TestStepContextOptions<I>): TestStepContext<I> {
  const controller = new AbortController();
  const progress: ProgressCall[] = [];
  const savedCursors: unknown[] = [];
  const approvals: ApprovalRequest[] = [];
  let cursor: unknown = options.cursor;
  const ctx: StepContext<I> = {
    jobId: options.jobId,
    tenantId: unsafeCast.tenantId('test'),
    step: options.step,
    attempt: 1,
    attemptGroup: 1,
    input: options.input,
    outputs: options.outputs ?? {},
    signal: controller.signal,
    idempotencyKey: `${options.jobId}:${options.step}:1`,
    cursor: options.cursor,
    log,
    blobs: options.blobs,
    // Unit tests run steps directly: an approval request is recorded and granted.
    requestApproval(request) {
      approvals.push(request);
      return Promise.resolve();
    },
    progress(done, total, message) {
      const call = { done, total, message };
      progress.push(call);
      options.onProgress?.(call, controller);
    },
    saveCursor(state) {
      cursor = JSON.parse(JSON.stringify(state)) as unknown;
      savedCursors.push(cursor);
      return Promise.resolve();
    },
  };
  return { ctx, controller, progress, cursor: () => cursor, savedCursors };
}
