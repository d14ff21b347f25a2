import { errors } from '@elastic/elasticsearch';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createOutageLog } from '../../src/search/outage-log.ts';
import { captureLog } from '../support/log-capture.ts';

/** An outage log on a clock the test moves. */
function setup(summaryMs = 30_000) {
  const log = captureLog();
  let clock = 1_000_000;
  const outages = createOutageLog(pino({ level: 'info' }, log.destination), { summaryMs, now: () => clock });
  return { log, outages, advance: (ms: number) => void (clock += ms) };
}

const refused = () => new errors.ConnectionError('connect ECONNREFUSED 127.0.0.1:9200');

describe('createOutageLog', () => {
  it('logs the first failure of an outage with its reason and counts the rest', () => {
    const { log, outages, advance } = setup();
    for (let i = 0; i < 100; i += 1) {
      outages.failed(refused(), 'entities');
      advance(100);
    }
    const lines = log.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, index: 'entities', es: { name: 'ConnectionError', message: expect.stringContaining('ECONNREFUSED') } });
  });

  it('summarises an ongoing outage at most once per interval', () => {
    const { log, outages, advance } = setup(30_000);
    outages.failed(refused(), 'meta');
    for (let second = 1; second <= 95; second += 1) {
      advance(1_000);
      outages.failed(refused(), 'meta');
    }
    const summaries = log.find('elasticsearch requests still failing');
    // Failures at 30 s, 60 s and 90 s after the first: three summaries, each counting the failures since the last line.
    expect(summaries.map((line) => [line.failures, line.sinceMs])).toEqual([
      [30, 30_000],
      [30, 60_000],
      [30, 90_000],
    ]);
    expect(log.lines()).toHaveLength(4);
  });

  it('logs one line when Elasticsearch answers again, then starts afresh', () => {
    const { log, outages, advance } = setup();
    outages.succeeded();
    expect(log.lines()).toEqual([]);
    for (let i = 0; i < 7; i += 1) outages.failed(refused(), 'meta');
    advance(4_500);
    outages.succeeded();
    outages.succeeded();
    expect(log.find('elasticsearch answers again').map((line) => [line.failures, line.downMs])).toEqual([[7, 4_500]]);
    outages.failed(refused(), 'meta');
    expect(log.find('elasticsearch request failed')).toHaveLength(2);
  });

  it('logs every failure that says nothing about the cluster (a rejected query, a missing index)', () => {
    const { log, outages } = setup();
    const rejected = (statusCode: number) => new errors.ResponseError({ statusCode, body: { error: { type: 'x', reason: 'y' } }, warnings: null, meta: {} as never });
    outages.failed(refused(), 'meta');
    for (const status of [400, 404, 500]) outages.failed(rejected(status), 'entities');
    outages.failed(new errors.TimeoutError('Request timed out'), 'meta');
    outages.failed(rejected(503), 'meta');
    expect(log.find('elasticsearch request failed').map((line) => line.es.status ?? line.es.name)).toEqual(['ConnectionError', 400, 404, 500]);
    outages.succeeded();
    expect(log.find('elasticsearch answers again').map((line) => line.failures)).toEqual([3]);
  });
});
