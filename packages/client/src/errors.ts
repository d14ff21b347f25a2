/** An answer of the gateway that is not a success, or a gateway that could not be reached. */
export class RegistryError extends Error {
  override name = 'RegistryError';
  /** The HTTP status; 0 when no answer came (`code` is then `network`). */
  readonly status: number;
  /** The API's error code (`invalid_parameter`, `not_found`, `gone`, `rate_limited`, …; the OpenAPI document lists them). */
  readonly code: string;
  /** The parameter a 400 names, when it names one. */
  readonly parameter: string | undefined;
  /** The error's `details` as the API sent them (`removedAt` of a 410, …). */
  readonly details: Record<string, unknown>;
  /** Seconds the answer asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;

  constructor(status: number, code: string, message: string, extra: { details?: Record<string, unknown>; retryAfter?: number } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = extra.details ?? {};
    this.parameter = typeof this.details.parameter === 'string' ? this.details.parameter : undefined;
    this.retryAfter = extra.retryAfter;
  }

  /** The error of an answer whose body was read: its `{error: {code, message, details}}`, or `http` with the status when the body is not one. */
  static from(response: Response, body: unknown): RegistryError {
    const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
    const code = typeof error?.code === 'string' ? error.code : 'http';
    const message = typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`;
    const details = error?.details !== null && typeof error?.details === 'object' ? (error.details as Record<string, unknown>) : undefined;
    return new RegistryError(response.status, code, message, { details, retryAfter: retryAfterOf(response) });
  }

  /** A request that got no answer at all. */
  static network(cause: unknown): RegistryError {
    return new RegistryError(0, 'network', `The gateway could not be reached (${(cause as Error)?.message ?? String(cause)}).`);
  }
}

/** `Retry-After` in seconds (delta-seconds, or an HTTP date from now), else undefined. */
export function retryAfterOf(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
