import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { rejected } from '../support/rejected.ts';
import { readQuery, readValue } from '../../src/query/parameters.ts';
import { IDS, LIMIT, MAX_ANY_OF, MAX_Q_LENGTH, NPC, PROFILE, Q } from '../../src/query/route-parameters.ts';


describe('query parameters', () => {
  it('limit: absent or empty is absent, above 200 counts as 200, else 400', () => {
    expect(readValue(LIMIT, undefined)).toBeUndefined();
    expect(readValue(LIMIT, '')).toBeUndefined();
    expect(readValue(LIMIT, ' ')).toBeUndefined();
    expect(readValue(LIMIT, '7')).toBe(7);
    expect(readValue(LIMIT, ' 7 ')).toBe(7);
    expect(readValue(LIMIT, '200')).toBe(200);
    expect(readValue(LIMIT, '500')).toBe(200);
    expect(readValue(LIMIT, '99999999999999999999999')).toBe(200);
    for (const bad of ['0', '-1', 'abc', '10abc', '1.5', '+5', '0x10', '1e3']) {
      const error = rejected(() => readValue(LIMIT, bad));
      expect(error.details).toEqual({ parameter: 'limit' });
      expect(error.message).toContain('limit');
    }
  });

  it('booleans are exactly true or false', () => {
    expect(readValue(NPC, 'true')).toBe(true);
    expect(readValue(NPC, 'false')).toBe(false);
    expect(readValue(NPC, undefined)).toBeUndefined();
    for (const bad of ['1', 'TRUE', 'yes', 'no']) expect(rejected(() => readValue(NPC, bad)).details).toEqual({ parameter: 'npc' });
  });

  it('q: trimmed, blank means absent, at most 200 characters (not UTF-16 units)', () => {
    expect(readValue(Q, '  zeta ')).toBe('zeta');
    expect(readValue(Q, '')).toBeUndefined();
    expect(readValue(Q, '   ')).toBeUndefined();
    expect(readValue(Q, undefined)).toBeUndefined();
    expect(readValue(Q, '😀'.repeat(MAX_Q_LENGTH))).toBe('😀'.repeat(MAX_Q_LENGTH));
    const error = rejected(() => readValue(Q, 'x'.repeat(MAX_Q_LENGTH + 1)));
    expect(error.details).toEqual({ parameter: 'q' });
    // The bad value is echoed, but not all 201 characters of it.
    expect(error.message.length).toBeLessThan(150);
  });

  it('refuses unknown and repeated parameters, naming them', () => {
    expect(readQuery({ limit: '5' }, [LIMIT])).toEqual({ limit: 5 });
    expect(rejected(() => readQuery({ limti: '5' }, [LIMIT])).details).toEqual({ parameter: 'limti' });
    expect(rejected(() => readQuery({ limit: ['5', '6'] }, [LIMIT])).details).toEqual({ parameter: 'limit' });
    expect(rejected(() => readQuery({ q: 'x' }, [])).message).toContain('takes no parameters');
  });

  it('profile is known or placeholder', () => {
    expect(readValue(PROFILE, 'known')).toBe('known');
    expect(readValue(PROFILE, undefined)).toBeUndefined();
    expect(rejected(() => readValue(PROFILE, 'verified')).details).toEqual({ parameter: 'profile' });
    expect(rejected(() => readValue(PROFILE, 'KNOWN')).details).toEqual({ parameter: 'profile' });
  });
});

/**
 * Whether `text` conforms to the schema of the parameter `name` of route-parameters.ts, decided
 * in a worker thread within `ms`: a pattern that backtracks exponentially blocks its thread, so a
 * timeout set in this one could never fire. Undefined when it did not answer in time.
 */
async function conformsWithin(name: string, text: string, ms = 2000): Promise<boolean | undefined> {
  const url = new URL('../../src/query/route-parameters.ts', import.meta.url).href;
  const code = `const { parentPort, workerData } = require('node:worker_threads');
    Promise.all([import(${JSON.stringify(url)}), import(${JSON.stringify(new URL('../../src/query/parameters.ts', import.meta.url).href)})])
      .then(([params, { conforms }]) => parentPort.postMessage(conforms(params[workerData.name].schema, workerData.text)));`;
  const worker = new Worker(code, { eval: true, workerData: { name, text } });
  try {
    return await Promise.race([once(worker, 'message').then(([answer]) => answer as boolean), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))]);
  } finally {
    await worker.terminate();
  }
}

describe('schema patterns', () => {
  // A pattern that backtracks exponentially hangs a worker on one request (one did: 24 members
  // and a trailing "|" took 99 s).
  it('decides an OR list of any length at once, and refuses past its cap', async () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `character:stillness:${2112000000 + i}`).join('|');
    expect(await conformsWithin('IDS', members(MAX_ANY_OF))).toBe(true);
    expect(await conformsWithin('IDS', members(MAX_ANY_OF + 1))).toBe(false);
    for (const n of [24, 99, 500]) expect(await conformsWithin('IDS', `${members(n)}|`), `${n} members and a trailing |`).toBe(false);
    expect(rejected(() => readValue(IDS, 'a| |b')).message).toContain('empty value');
  });
});
