/** A refusal with a SPEC/CONTRACT error code. The API maps codes to HTTP statuses in one table. */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
