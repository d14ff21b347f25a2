/** The run's Elasticsearch, as test files see it. */
import { randomBytes } from 'node:crypto';
import type { Client } from '@elastic/elasticsearch';
import { inject } from 'vitest';
import { createClient } from '../../src/search/client.ts';

export function testClient(): Client {
  return createClient(inject('esUrl'), 120_000);
}

/** An index prefix of the test's own: test files run in parallel on one cluster. */
export function uniquePrefix(name: string): string {
  return `t-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${randomBytes(3).toString('hex')}`;
}

/** Deletes every index of a test's prefix (its generations), whatever state the test left. */
export async function deleteIndices(client: Client, prefix: string): Promise<void> {
  const names = Object.keys((await client.indices.get({ index: `${prefix}-*` }, { ignore: [404] })) ?? {}).filter((n) => n.startsWith(`${prefix}-`));
  if (names.length) await client.indices.delete({ index: names, ignore_unavailable: true });
}
