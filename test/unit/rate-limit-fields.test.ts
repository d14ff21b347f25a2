/** The draft-11 RateLimit fields the rate limit writes. */
import { describe, expect, it } from 'vitest';
import { policyField, pointsField, retryAfterSeconds } from '../../src/limits/fields.ts';

describe('RateLimit fields', () => {
  it('advertise the point budget and the download limit as draft-11 policies', () => {
    expect(policyField({ rate: 50, burst: 100, windowSeconds: 2 }, 4)).toBe('"default";q=100;w=2, "downloads";q=4;qu="concurrent-requests"');
    expect(policyField(undefined, 4)).toBe('"downloads";q=4;qu="concurrent-requests"');
    expect(policyField(undefined, undefined)).toBeUndefined();
  });

  it('report points left and whole seconds to the renewal; Retry-After is at least 1', () => {
    expect(pointsField(97, 1_999)).toBe('"default";r=97;t=2');
    expect(pointsField(-3, 0)).toBe('"default";r=0;t=0');
    expect(retryAfterSeconds(1_001)).toBe(2);
    expect(retryAfterSeconds(0)).toBe(1);
  });
});
