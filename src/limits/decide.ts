/**
 * Whether a request is admitted, decided once and here: by the refusals before Koa
 * (src/http/early-refusal.ts) when they can answer it, else by the rate-limit middleware — both
 * call `decide`, and a request decided early is not decided again. In order:
 *
 * 1. **Downloads** (`EXPORT_CONCURRENCY`): at most that many in flight per client, across the
 *    gateway (./holds.ts); the next is a 429. They cost no points.
 * 2. **Refused until the window renews**: a client the budget refused is refused again without
 *    spending, until its window renews.
 * 3. **Points** (`RATE_LIMIT`, ./points.ts): the request's cost (./request-cost.ts) spent from
 *    the client's window; past it a 429 with `Retry-After`, and the client is refused as in 2.
 * 4. **Admission control** (./admission.ts): a request that surely reads Elasticsearch is a 503
 *    while admission would refuse it anyway (after its points: refusals cost too).
 *
 * Every answer carries the RateLimit fields (./fields.ts) of the policies that apply.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.ts';
import type { Admission } from './admission.ts';
import type { ClientIdentity } from './client-identity.ts';
import { downloadsField, pointsField, retryAfterSeconds } from './fields.ts';
import type { Holds } from './holds.ts';
import type { Points, Refused } from './points.ts';
import { type Cost, refusedWhenSaturated } from './request-cost.ts';

/** What a client holds while a download is in flight (./holds.ts). */
const DOWNLOADS = 'downloads';

export type Decision =
  | {
      verdict: 'admit';
      /** The RateLimit fields of the answer. */
      fields: Record<string, string>;
      /** Gives back what the request holds (a download in flight), once its response has closed. */
      release?: () => void;
      /** A probe: its Elasticsearch requests bypass admission control. */
      probe: boolean;
    }
  | { verdict: 'refuse'; error: ApiError; fields: Record<string, string> };

export interface LimitsOptions {
  /** The points budget; undefined: `RATE_LIMIT=off`. */
  points: Points | undefined;
  /** Downloads in flight per client; undefined: no limit. */
  exportConcurrency: number | undefined;
  holds: Holds;
  admission: Admission | undefined;
  /** The `RateLimit-Policy` field (./fields.ts `policyField`); undefined: nothing is limited. */
  policy: string | undefined;
}

export interface Limits {
  /** The decision on `client`'s request of `cost`: spends its points or takes its download. */
  decide(client: ClientIdentity, cost: Cost): Promise<Decision>;
  /**
   * Whether the request would be refused without anything being spent first: its client is
   * refused until its window renews, or admission control is saturated and the request surely
   * reads Elasticsearch. The refusals before Koa answer only those.
   */
  refusedNow(client: ClientIdentity, cost: Cost): boolean;
  /** Whether any request may be refused now that way (cheapest test, before reading the request). */
  anyRefusedNow(): boolean;
  /** Keeps a decision for the rest of the stack (made before Koa, the request admitted after all). */
  remember(req: IncomingMessage, decision: Decision): void;
  /** The decision made for `req` before Koa, if any. */
  remembered(req: IncomingMessage): Decision | undefined;
}

export function createLimits(options: LimitsOptions): Limits {
  const { points, exportConcurrency, holds, admission, policy } = options;
  /** Clients the budget refused, until their window renews. */
  const blocked = new Map<string, Refused>();
  const decisions = new WeakMap<IncomingMessage, Decision>();

  const blockOf = (client: string, now = Date.now()): Refused | undefined => {
    const refused = blocked.get(client);
    // A window renewed: the client is no longer refused.
    if (refused && refused.until <= now) {
      blocked.delete(client);
      return undefined;
    }
    return refused;
  };

  return {
    async decide(client, cost) {
      const fields: Record<string, string> = policy ? { 'RateLimit-Policy': policy } : {};
      const refuse = (error: ApiError): Decision => ({ verdict: 'refuse', error, fields });
      const admit = (release?: () => void): Decision => {
        if (admission && refusedWhenSaturated(cost) && admission.full(client.key)) return refuse(ApiError.overloaded());
        return { verdict: 'admit', fields, release, probe: cost.kind === 'points' && cost.probe === true };
      };
      if (!policy) return admit();

      if (cost.kind === 'download') {
        if (!exportConcurrency) return admit();
        const running = await holds.take(DOWNLOADS, client.key, exportConcurrency);
        if (running === undefined) {
          fields.RateLimit = downloadsField(0);
          return refuse(ApiError.rateLimited(`This client already has ${exportConcurrency} downloads in flight; retry when one has finished.`, 1));
        }
        fields.RateLimit = downloadsField(exportConcurrency - running - 1);
        return admit(() => holds.give(DOWNLOADS, client.key));
      }

      if (!points) return admit();
      const now = Date.now();
      const block = blockOf(client.key, now);
      if (block && cost.points > 0) {
        fields.RateLimit = pointsField(0, block.until - now);
        return refuse(ApiError.rateLimited(block.message, retryAfterSeconds(block.until - now)));
      }
      // A loopback probe costs 0: it reads the budget without spending or being refused.
      const spent = await points.spend(client.key, cost.points);
      fields.RateLimit = spent.field;
      if (spent.refused) {
        blocked.set(client.key, spent.refused.block);
        return refuse(spent.refused.error);
      }
      return admit();
    },
    refusedNow(client, cost) {
      if (cost.kind !== 'points' || cost.points === 0) return false;
      if (points && blockOf(client.key)) return true;
      return refusedWhenSaturated(cost) && (admission?.saturated() ?? false);
    },
    anyRefusedNow: () => blocked.size > 0 || (admission?.saturated() ?? false),
    remember: (req, decision) => decisions.set(req, decision),
    remembered: (req) => decisions.get(req),
  };
}
