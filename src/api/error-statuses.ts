import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** CONTRACT §5: the HTTP status of every error code, in one table. */
const statusByCode: Record<string, ContentfulStatusCode> = {
  BAD_REQUEST: 400,
  INVALID_USER_ID: 400,
  INVALID_AMOUNT: 400,
  INVALID_RECIPIENT_ADDRESS: 400,
  INVALID_ADDRESS: 400,
  MISSING_DESTINATION_TAG: 400,
  INVALID_WEBHOOK_URL: 400,
  UNAUTHORIZED: 401,
  INVALID_API_KEY: 401,
  INVALID_TOTP: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  WITHDRAWAL_NOT_FOUND: 404,
  DUPLICATE_REFERENCE: 409,
  DUPLICATE_DEPOSIT: 409,
  DUPLICATE_APPROVAL: 409,
  DUPLICATE_USERNAME: 409,
  WITHDRAWAL_NOT_PENDING: 409,
  WITHDRAWAL_ALREADY_PROCESSED: 409,
  INSUFFICIENT_APPROVALS: 409,
  PAYLOAD_TOO_LARGE: 413,
  INVALID_CHAIN: 422,
  CHAIN_NOT_ENABLED: 422,
  // the unknown token id; the JWT's INVALID_TOKEN (401) is an ApiError the authentication middleware raises itself
  INVALID_TOKEN: 422,
  INVALID_TOKEN_CHAIN: 422,
  TOKEN_NOT_ENABLED: 422,
  INVALID_MIN_SIGNERS: 422,
  WITHDRAWAL_BELOW_MINIMUM: 422,
  WITHDRAWAL_ABOVE_MAXIMUM: 422,
  INSUFFICIENT_BALANCE: 422,
  INSUFFICIENT_GAS: 422,
  INSUFFICIENT_CONFIRMED_BALANCE: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  FAILED_TO_CREATE_DEPOSIT_ACCOUNT: 503,
};

/**
 * The status of a DomainError's code. INVALID_TOKEN means two things in SPEC: an unknown token id
 * (422, a DomainError, mapped here) and an invalid JWT (401, answered as an ApiError by
 * middleware/authenticate.ts, which never passes through this table).
 */
export const statusOf = (code: string): ContentfulStatusCode => statusByCode[code] ?? 500;
