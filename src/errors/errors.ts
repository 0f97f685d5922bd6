/**
 * A mistake the caller can fix (bad input, missing file, refused request). Tools turn it into an
 * `isError: true` result whose text says what was wrong and how to fix it; anything else is an
 * internal fault.
 */
export class CallerError extends Error {
  constructor(
    message: string,
    /** What the caller should do about it; appended to the message shown to the caller. */
    readonly fix?: string,
    /** Structured detail (e.g. the list of refusal reasons) for callers that parse results. */
    readonly details?: Record<string, unknown>,
  ) {
    super(fix ? `${message}${message.includes('\n') ? '\n' : ' '}${fix}` : message);
    this.name = 'CallerError';
  }
}
