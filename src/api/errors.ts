import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainError } from '../errors.js';
import { statusOf } from './error-statuses.js';

/** SPEC §7.1: every error body is { error, message, statusCode, details? }. */
export interface ErrorBody {
  error: string;
  message: string;
  statusCode: number;
  details?: Record<string, unknown>;
}

/** An error the API answers with as it is: a SPEC/CONTRACT code and its HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly status: ContentfulStatusCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** response headers that belong to this error (Retry-After) */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static fromDomain(error: DomainError): ApiError {
    return new ApiError(error.code, statusOf(error.code), error.message, error.details);
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message, statusCode: this.status, ...(this.details ? { details: this.details } : {}) };
  }
}

export const notFound = () => new ApiError('NOT_FOUND', 404, 'No such route');
export const internalError = () => new ApiError('INTERNAL_ERROR', 500, 'An unexpected error occurred');
export const serviceUnavailable = (details?: Record<string, unknown>) =>
  new ApiError('SERVICE_UNAVAILABLE', 503, 'The service is temporarily unavailable', details);
