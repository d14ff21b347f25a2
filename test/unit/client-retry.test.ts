/**
 * The client's waits, against a fetch that answers as told and records when it was asked: a
 * 429/503 with `Retry-After` is asked again no sooner than it says; spent points (`RateLimit`
 * r=0) hold the next request; a request without an answer is asked again with backoff; nothing
 * but GET and HEAD is ever sent twice; a wait ends with the request's signal; errors carry the
 * API's code.
 */
import { describe, expect, it } from 'vitest';
import { RegistryError, retryAfterOf } from '../../packages/client/src/errors.ts';
import { retryingFetch, spentFor } from '../../packages/client/src/retry.ts';

type Answer = Response | Error;

/** A fetch that gives these answers in turn and records each request's method and instant. */
function scripted(answers: (() => Answer)[]) {
  const asked: { method: string; at: number }[] = [];
  const send = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    asked.push({ method: request.method, at: performance.now() });
    const answer = answers.shift()?.() ?? new Response('{}');
    if (answer instanceof Error) throw answer;
    return answer;
  }) as typeof fetch;
  return { send, asked };
}

const limited = (seconds: string, status = 429) => () =>
  new Response(JSON.stringify({ error: { code: 'rate_limited', message: 'slow down' } }), { status, headers: { 'Retry-After': seconds } });

describe('retryingFetch', () => {
  it('asks again after Retry-After, no sooner', async () => {
    const { send, asked } = scripted([limited('1'), limited('1', 503), () => new Response('ok')]);
    const response = await retryingFetch(send)('http://gw/v1/entities');
    expect(await response.text()).toBe('ok');
    expect(asked).toHaveLength(3);
    expect(asked[1]!.at - asked[0]!.at).toBeGreaterThanOrEqual(995);
    expect(asked[2]!.at - asked[1]!.at).toBeGreaterThanOrEqual(995);
  });

  it('answers a 429 as it came once the retries are spent, or when it asks for more than maxWaitMs', async () => {
    const spent = scripted([limited('0'), limited('0'), limited('0')]);
    expect((await retryingFetch(spent.send, { retries: 2 })('http://gw/v1/x')).status).toBe(429);
    expect(spent.asked).toHaveLength(3);
    const long = scripted([limited('3600')]);
    expect((await retryingFetch(long.send)('http://gw/v1/x')).status).toBe(429);
    expect(long.asked).toHaveLength(1);
  });

  it('holds the next request while the RateLimit field says the points are spent', async () => {
    const { send, asked } = scripted([() => new Response('a', { headers: { RateLimit: '"default";r=0;t=1, "streams";r=3' } }), () => new Response('b')]);
    const fetchWithWaits = retryingFetch(send);
    await fetchWithWaits('http://gw/v1/a');
    await fetchWithWaits('http://gw/v1/b');
    expect(asked[1]!.at - asked[0]!.at).toBeGreaterThanOrEqual(995);
  });

  it('asks again after no answer, with backoff; never sends anything but GET and HEAD twice', async () => {
    const lost = scripted([() => new TypeError('fetch failed'), () => new TypeError('fetch failed'), () => new Response('ok')]);
    expect(await (await retryingFetch(lost.send, { backoffMs: 20 })('http://gw/v1/x')).text()).toBe('ok');
    expect(lost.asked[2]!.at - lost.asked[1]!.at).toBeGreaterThanOrEqual(38);
    const post = scripted([limited('0'), () => new Response('ok')]);
    expect((await retryingFetch(post.send)('http://gw/v1/x', { method: 'POST', body: '{}' })).status).toBe(429);
    const postLost = scripted([() => new TypeError('fetch failed')]);
    await expect(retryingFetch(postLost.send)('http://gw/v1/x', { method: 'POST' })).rejects.toThrow('fetch failed');
    expect([post.asked.length, postLost.asked.length]).toEqual([1, 1]);
  });

  it('ends a wait when the request is aborted', async () => {
    const { send, asked } = scripted([limited('30')]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const started = performance.now();
    await expect(retryingFetch(send)('http://gw/v1/x', { signal: abort.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(asked).toHaveLength(1);
  });
});

describe('what the answers say', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const at = (value: string) => retryAfterOf(new Response('', { headers: { 'Retry-After': value } }), Date.parse('2026-12-01T00:00:00Z'));
    expect([at('7'), at('Tue, 01 Dec 2026 00:00:30 GMT'), at('soon')]).toEqual([7, 30, undefined]);
  });

  it('reads spent points of the default policy only', () => {
    const spent = (field: string) => spentFor(new Response('', { headers: { RateLimit: field } }));
    expect([spent('"default";r=0;t=12'), spent('"default";r=4;t=12'), spent('"streams";r=0'), spent('"downloads";r=0;t=5')]).toEqual([12, undefined, undefined, undefined]);
  });

  it('makes one error class of an error answer, and of a body that is not one', async () => {
    const body = { error: { code: 'invalid_parameter', message: 'cursor: not a cursor of this route', details: { parameter: 'cursor' } } };
    const error = RegistryError.from(new Response('', { status: 400 }), body);
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter', parameter: 'cursor', message: 'cursor: not a cursor of this route' });
    expect(RegistryError.from(new Response('<html>', { status: 502 }), undefined)).toMatchObject({ status: 502, code: 'http', message: 'HTTP 502' });
  });
});
