/**
 * The SDK's errors: one class per error `code` Homing answers with.
 *
 *     HomingError                 base: status, code, message, details, requestId
 *     ├── HomingConnectionError   no answer: connection refused, reset, or a timeout
 *     │   └── HomingTimeout       the call's timeout passed
 *     └── ApiError                Homing answered with an error envelope
 *         ├── BadRequestError ... one subclass per status (400, 401, 403, 404, ...)
 *         │   └── <Code>Error     one subclass per `code` (src/codes.ts, generated)
 *         └── (unknown codes throw the status class, unknown statuses ApiError)
 *
 * The tree and the names are the Python SDK's (homing_client.errors).
 */

export interface ErrorFields {
  status?: number | null;
  code?: string;
  details?: Record<string, unknown>;
  requestId?: string | null;
  retryAfter?: number | null;
}

/** Something went wrong calling Homing. */
export class HomingError extends Error {
  static readonly status: number | null = null;
  static readonly code: string = "client_error";
  override readonly name: string = "HomingError";
  readonly status: number | null;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly requestId: string | null;
  /** Seconds from a 429's or 503's `Retry-After`, when Homing sent one. */
  readonly retryAfter: number | null;

  constructor(message: string, fields: ErrorFields = {}, options?: { cause?: unknown }) {
    super(message, options);
    const own = this.constructor as typeof HomingError;
    this.status = fields.status ?? own.status;
    this.code = fields.code ?? own.code;
    this.details = fields.details ?? {};
    this.requestId = fields.requestId ?? null;
    this.retryAfter = fields.retryAfter ?? null;
  }
}

/** Homing did not answer. */
export class HomingConnectionError extends HomingError {
  static override readonly code: string = "connection_error";
  override readonly name: string = "HomingConnectionError";
}

/** The call did not finish within its timeout. */
export class HomingTimeout extends HomingConnectionError {
  static override readonly code: string = "timeout";
  override readonly name: string = "HomingTimeout";
}

/** Homing answered with an error. */
export class ApiError extends HomingError {
  static override readonly code: string = "http_error";
  override readonly name: string = "ApiError";
}

export type ApiErrorClass = new (message: string, fields?: ErrorFields) => ApiError;

/** HTTP 400. */
export class BadRequestError extends ApiError {
  static override readonly status: number | null = 400;
  override readonly name: string = "BadRequestError";
}
/** HTTP 401. */
export class AuthenticationError extends ApiError {
  static override readonly status: number | null = 401;
  override readonly name: string = "AuthenticationError";
}
/** HTTP 403. */
export class PermissionDeniedError extends ApiError {
  static override readonly status: number | null = 403;
  override readonly name: string = "PermissionDeniedError";
}
/** HTTP 404. */
export class NotFoundError extends ApiError {
  static override readonly status: number | null = 404;
  override readonly name: string = "NotFoundError";
}
/** HTTP 405. */
export class MethodNotAllowedError extends ApiError {
  static override readonly status: number | null = 405;
  override readonly name: string = "MethodNotAllowedError";
}
/** HTTP 409. */
export class ConflictError extends ApiError {
  static override readonly status: number | null = 409;
  override readonly name: string = "ConflictError";
}
/** HTTP 413. */
export class PayloadTooLargeError extends ApiError {
  static override readonly status: number | null = 413;
  override readonly name: string = "PayloadTooLargeError";
}
/** HTTP 415. */
export class UnsupportedMediaTypeError extends ApiError {
  static override readonly status: number | null = 415;
  override readonly name: string = "UnsupportedMediaTypeError";
}
/** HTTP 422. */
export class UnprocessableError extends ApiError {
  static override readonly status: number | null = 422;
  override readonly name: string = "UnprocessableError";
}
/** HTTP 429. */
export class RateLimitError extends ApiError {
  static override readonly status: number | null = 429;
  override readonly name: string = "RateLimitError";
}
/** HTTP 500. */
export class InternalServerError extends ApiError {
  static override readonly status: number | null = 500;
  override readonly name: string = "InternalServerError";
}
/** HTTP 503. */
export class ServiceUnavailableError extends ApiError {
  static override readonly status: number | null = 503;
  override readonly name: string = "ServiceUnavailableError";
}

export const STATUS_CLASSES: ReadonlyMap<number, ApiErrorClass> = new Map<number, ApiErrorClass>([
  [400, BadRequestError],
  [401, AuthenticationError],
  [403, PermissionDeniedError],
  [404, NotFoundError],
  [405, MethodNotAllowedError],
  [409, ConflictError],
  [413, PayloadTooLargeError],
  [415, UnsupportedMediaTypeError],
  [422, UnprocessableError],
  [429, RateLimitError],
  [500, InternalServerError],
  [503, ServiceUnavailableError],
]);
