/**
 * Ids and instants of the on-chain events that other files point at: each character's
 * `character.created` event and each deployable's `*.created` event. Facts (`source_event_id`,
 * `transaction_digest`) and events.jsonl both derive them from here, so they always agree.
 */
import type { Context } from './context.ts';
import type { EntitySpec } from './entities.ts';
import { createRandom } from './random.ts';
import { cycleOf, formatTime } from './time.ts';

export interface ChainEventRef {
  id: string;
  digest: string;
  ns: bigint;
  occurredAt: string;
}

/**
 * The `character.created` event of a character, or undefined when the writer would not export
 * one (a tenant other than the environment: the writer's tenant filter drops such events).
 */
export function characterCreatedEvent(ctx: Context, spec: EntitySpec): ChainEventRef | undefined {
  if (spec.type !== 'character' || spec.tenant !== spec.environment) return undefined;
  const digest = createRandom(ctx.seed, 'character-created-digest', spec.typeIndex).base58(44);
  const ns = ctx.table.characterCreatedNs[spec.typeIndex]!;
  return { id: `event:${digest}:0`, digest, ns, occurredAt: formatTime(ns, ctx.table.characterCreatedOffset[spec.typeIndex]!) };
}

/** Whether a character's facts carry `source_event_id`/`source_event_kind`/`transaction_digest`. */
export function hasEvidenceFacts(ctx: Context, spec: EntitySpec): boolean {
  const event = characterCreatedEvent(ctx, spec);
  if (!event) return false;
  const roll = createRandom(ctx.seed, 'character-evidence', spec.typeIndex).next();
  const cycle = cycleOf(event.ns);
  return cycle === 6 ? roll < 0.8 : cycle === 5 ? roll < 0.3 : false;
}

/** The id of a deployable's creation event (its time is drawn where events.jsonl is written). */
export function deployableCreatedEventId(ctx: Context, spec: EntitySpec): { id: string; digest: string } {
  const digest = createRandom(ctx.seed, 'deployable-created-digest', spec.index).base58(44);
  return { id: `event:${digest}:0`, digest };
}
