import type { JobType } from './define-job.js';
import { UnknownJobTypeError } from '../errors/unknown-job-type-error.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import type { PlannedStep } from './job.js';

/** The job types a process knows. Server and workers must register the same set. */
export class JobRegistry {
  readonly #types = new Map<string, JobType>();

  constructor(types: readonly JobType[] = []) {
    for (const t of types) this.register(t);
  }

  register(type: JobType): this {
    if (this.#types.has(type.name)) throw new Error(`job type ${type.name} registered twice`);
    this.#types.set(type.name, type);
    return this;
  }

  /** @throws UnknownJobTypeError */
  get(name: string): JobType {
    const t = this.#types.get(name);
    if (!t) throw new UnknownJobTypeError(name, this.names());
    return t;
  }

  has(name: string): boolean {
    return this.#types.has(name);
  }

  names(): string[] {
    return [...this.#types.keys()].sort();
  }

  list(): JobType[] {
    return this.names().map((n) => this.get(n));
  }

  /**
   * Parses `input` with the type's schema and freezes the plan.
   * @throws UnknownJobTypeError, InvalidInputError
   */
  prepare(name: string, input: unknown): { type: JobType; input: unknown; plan: PlannedStep[] } {
    const type = this.get(name);
    const parsed = type.input.safeParse(input);
    if (!parsed.success) throw InvalidInputError.fromZod(`input for ${name}`, parsed.error.issues, ['input']);
    let steps;
    try {
      steps = type.plan(parsed.data);
    } catch (e: unknown) {
      throw new InvalidInputError(`Cannot plan ${name} for this input: ${e instanceof Error ? e.message : String(e)}`);
    }
    return { type, input: parsed.data, plan: steps.map((s) => ({ name: s.name, effect: s.effect })) };
  }
}
