/**
 * The RateLimit fields (draft-ietf-httpapi-ratelimit-headers, draft 11), composed here and
 * nowhere else: `RateLimit-Policy` names each policy and its quota, `RateLimit` what is left of
 * each for this client. The points budget is `"default"` (a window of `burst` points), downloads
 * and streams are `"concurrent-requests"` quotas.
 */
import type { RateLimit } from '../config.ts';

/** The `RateLimit-Policy` value of a configuration (a structured list), or undefined when nothing is limited. */
export function policyField(rateLimit: RateLimit | undefined, exportConcurrency: number | undefined): string | undefined {
  const policies = [
    ...(rateLimit ? [`"default";q=${rateLimit.burst};w=${rateLimit.windowSeconds}`] : []),
    ...(exportConcurrency ? [`"downloads";q=${exportConcurrency};qu="concurrent-requests"`] : []),
  ];
  return policies.length ? policies.join(', ') : undefined;
}

/** The streams policy beside the others (`STREAMS_PER_CLIENT`). */
export const streamsPolicy = (quota: number): string => `"streams";q=${quota};qu="concurrent-requests"`;

/** The points left and whole seconds until the window renews. */
export function pointsField(remaining: number, msBeforeNext: number): string {
  return `"default";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(msBeforeNext / 1000))}`;
}

/** Downloads (or streams) this client may still start. */
export const downloadsField = (left: number): string => `"downloads";r=${Math.max(0, left)}`;
export const streamsField = (left: number): string => `"streams";r=${Math.max(0, left)}`;

/** `Retry-After` of a refusal: whole seconds until the window renews, at least 1. */
export function retryAfterSeconds(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}

/** One more member of a structured-list field already set (or the first). */
export const listed = (field: string | undefined, member: string): string => (field ? `${field}, ${member}` : member);
