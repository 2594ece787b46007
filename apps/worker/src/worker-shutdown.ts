/** Abort reason used when the worker is shutting down: the job is handed back, not failed. */
export class WorkerShutdown extends Error {
  constructor() {
    super('worker is shutting down');
    this.name = 'WorkerShutdown';
  }
}
