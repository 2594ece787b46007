import type { JobType, ValidateContext } from './define-job.js';
import type { PlannedStep } from './job.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';

/**
 * Runs a type's `enrich` hook at start_job (after `validate`): the stored input becomes the
 * caller's input completed with facts known only at planning time, and the plan is built from it,
 * so `plan()` stays a pure function of the stored input on every later resume. Without a hook the
 * prepared input and plan are returned unchanged.
 * @throws InvalidInputError when the enriched input no longer parses or cannot be planned (a bug in the hook),
 *   and whatever the hook throws.
 */
export async function enrichInput(
  prepared: { type: JobType; input: unknown; plan: PlannedStep[] },
  ctx: ValidateContext,
): Promise<{ input: unknown; plan: PlannedStep[] }> {
  const { type } = prepared;
  if (!type.enrich) return { input: prepared.input, plan: prepared.plan };
  const parsed = type.input.safeParse(await type.enrich(prepared.input, ctx));
  if (!parsed.success) throw InvalidInputError.fromZod(`enriched input for ${type.name}`, parsed.error.issues, ['input']);
  let steps;
  try {
    steps = type.plan(parsed.data);
  } catch (e: unknown) {
    throw new InvalidInputError(`Cannot plan ${type.name} for this input: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { input: parsed.data, plan: steps.map((s) => ({ name: s.name, effect: s.effect })) };
}
