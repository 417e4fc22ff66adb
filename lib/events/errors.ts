// Bad input is answered, never thrown past the handler: each failure carries the
// HTTP status to answer with. Knative's dispatcher retries 5xx, 404, 408, 409 and
// 429, so bad input must use a final 4xx: these four.
export type BadEventStatus = 400 | 413 | 415 | 422;

export class BadEventError extends Error {
  constructor(
    readonly status: BadEventStatus,
    readonly problem: string,
  ) {
    super(problem);
    this.name = 'BadEventError';
  }

  /** The JSON body to answer with. */
  toJSON(): { error: string; status: BadEventStatus } {
    return { error: this.problem, status: this.status };
  }
}
