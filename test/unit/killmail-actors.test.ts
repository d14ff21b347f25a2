/** Killmail enrichment: names only from entity rows, NPC killers only by explicit type id. */
import { describe, expect, it } from 'vitest';
import { actorEntityIds, detailOf, listView, rawRecord, withActors } from '../../src/indices/killmail-actors.ts';

const unresolved = (rawId: string) => ({ entityType: 'unknown', rawId, displayName: 'Unknown', confidence: 'unknown' });

const row = {
  id: 'killmail:stillness:1',
  environment: 'stillness',
  systemId: 'system:stillness:30000001',
  victimCharacterId: 'character:stillness:2112000001',
  killerTypeId: '94411',
  raw: { event: { json: { killer_id: { item_id: '77', tenant: 'stillness' } } } },
  kind: 'killmail',
  system: unresolved('system:stillness:30000001'),
  victim: { entityId: 'character:stillness:2112000001', entityType: 'character', displayName: 'Vesna Korr', confidence: 'verified' },
  killer: unresolved('94411'),
  reporter: unresolved(''),
  summaryText: 'Unknown killed Vesna Korr',
};

const entity = (id: string, entityType: string, name: string) => [id, { id, entityType, name, displayName: name }] as const;

describe('killmail actors', () => {
  it('looks the NPC killer up by its type id, never by the raw killer_id', () => {
    const ids = actorEntityIds([row]);
    expect(ids).toContain('enemy:stillness:type:94411');
    expect(ids.some((id) => id.includes(':77'))).toBe(false);
  });

  it('fills names and unresolved actors from the entities found', () => {
    const entities = new Map([entity('enemy:stillness:type:94411', 'enemy', 'Warden Drone [NPC]'), entity('system:stillness:30000001', 'system', 'OKR-3T1')]);
    const out = withActors(row, entities);
    expect(out.killerName).toBe('Warden Drone [NPC]');
    expect(out.killer).toMatchObject({ entityId: 'enemy:stillness:type:94411', entityType: 'enemy', typeId: '94411', isNpc: true, confidence: 'verified' });
    expect(out.systemName).toBe('OKR-3T1');
    // Resolved in the export: kept as exported; the name is filled only because it is missing.
    expect(out.victim).toEqual(row.victim);
    expect(out.victimName).toBeUndefined();
  });

  it('invents nothing when no entity is found', () => {
    const out = withActors(row, new Map());
    expect(out).toEqual(row);
  });

  it('does not copy a name that is only the raw id', () => {
    const entities = new Map([entity('system:stillness:30000001', 'system', 'system:stillness:30000001')]);
    expect(withActors(row, entities).systemName).toBeUndefined();
  });

  it('stores a list view without raw, and the detail rebuilt from it equals the enriched row, key order included', () => {
    const entities = new Map([entity('enemy:stillness:type:94411', 'enemy', 'Warden Drone [NPC]'), entity('system:stillness:30000001', 'system', 'OKR-3T1')]);
    const view = listView(row, entities);
    expect(view).not.toHaveProperty('raw');
    expect(view.killerName).toBe('Warden Drone [NPC]');
    const detail = detailOf(row, view);
    const enriched = withActors(row, entities);
    expect(detail).toEqual(enriched);
    expect(Object.keys(detail)).toEqual(Object.keys(enriched));
    expect(Object.keys(detail).indexOf('raw')).toBe(Object.keys(row).indexOf('raw'));
  });

  it('keeps the reported fields in the raw record and drops the derived ones', () => {
    const raw = rawRecord(row);
    expect(Object.keys(raw)).toEqual(['id', 'environment', 'systemId', 'victimCharacterId', 'killerTypeId', 'raw']);
  });
});
