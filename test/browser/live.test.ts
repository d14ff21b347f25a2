/**
 * The explorer's live switch in a real Chromium: the killmails page with live on shows the
 * killmails the next generation adds (expected from the two bundles' files) on top of the
 * page, each once, without reloading it; a filter change reopens the stream with the new
 * filters (and only those the stream takes); switching live off, and leaving the page, close
 * it (the gateway's `<prefix>_streams_open` back to 0).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { readAllRows } from '../../generator/read-bundle.ts';
import { byteCompare, instantNanos, lastWins, newestFirst } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { withNewRows } from '../../generator/new-rows.ts';
import { screenshot, seriousViolations, type WatchedBrowser, watchedBrowser } from './browser.ts';

const chromium = inject('chromium');
const PAGE_SIZE = 50; // web/explorer/components/timeline-view.tsx

let gw: TestGateway;
let work: string;
let next: string;
let browser: Browser;
let watched: WatchedBrowser;
let page: Page;

const streamsOpen = async () => Number(/_streams_open (\d+)/.exec((await gw.get('/metrics')).text)?.[1]);
const rowIds = () => page.locator('[data-testid=rows] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id')));

describe.skipIf(!chromium)('the live switch in Chromium', () => {
  beforeAll(async () => {
    gw = await startTestGateway({ name: 'live', scale: 1, seed: 17 });
    work = await mkdtemp(path.join(tmpdir(), 'live-'));
    next = path.join(work, 'next');
    await writeNextExport(gw.bundleDir, next, { killmails: withNewRows('live') });
    watched = await watchedBrowser(chromium, gw.url);
    ({ page, browser } = watched);
  }, 300_000);

  afterAll(async () => {
    await watched?.close();
    await gw?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('shows the killmails of the next generation on top as they arrive, each once, and closes the stream when switched off', async () => {
    const before = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (row) => row.id).filter((r) => r.environment === 'stillness');
    const old = new Set(before.map((r) => r.id));
    // The stream's order: as the load made them visible (as they happened, then id); each goes on top.
    const added = (await readAllRows(next, 'killmails.jsonl'))
      .filter((r) => r.environment === 'stillness' && !old.has(r.id))
      .sort((a, b) => {
        const d = instantNanos(a.occurredAt) - instantNanos(b.occurredAt);
        return d !== 0n ? (d > 0n ? 1 : -1) : byteCompare(a.id, b.id);
      });
    expect(added.length).toBeGreaterThan(1);
    const firstPage = newestFirst(before, (r) => r.occurredAt, (r) => r.id).slice(0, PAGE_SIZE).map((r) => r.id);

    const streams: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/stream')) streams.push(request.url());
    });
    await page.goto(`${gw.url}/explorer/#/killmails?cycles=all`);
    await expect.poll(() => rowIds(), { timeout: 15_000 }).toEqual(firstPage);
    const toggle = page.getByRole('switch', { name: 'Live' });
    // The switch renders its state a render after the URL changes: waited for, never read once.
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    await page.waitForURL(/live=on/);
    await expect.poll(() => page.getByTestId('live-status').getAttribute('data-status')).toBe('live');
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => streamsOpen()).toBe(1);
    // Only the filters: no paging, sort, select or page state.
    const opened = new URL(streams.at(-1)!);
    expect(opened.pathname).toBe('/v1/killmails/stream');
    expect([...opened.searchParams.keys()].sort()).toEqual(['cycles', 'since_indexed']);
    // The page is not read again while rows arrive: no other request to the list.
    const listReads: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/v1/killmails') listReads.push(request.url());
    });

    await gw.loadNext(next);
    const expected = [...added.map((r) => r.id).reverse(), ...firstPage];
    await expect.poll(() => rowIds(), { timeout: 20_000 }).toEqual(expected);
    const shown = await rowIds();
    expect(new Set(shown).size).toBe(shown.length);
    await expect(page.locator('[data-testid=rows] tr[data-live=true]').count()).resolves.toBe(added.length);
    await expect(page.getByTestId('live-status').innerText()).resolves.toContain(`${added.length} new`);
    expect(listReads).toEqual([]);
    await screenshot(page, '10-killmails-live');
    expect(await seriousViolations(page)).toEqual([]);

    // A filter change: the stream reopens with the new filters, the old one closed.
    const count = streams.length;
    await page.locator('select[name=npc]').selectOption('true');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/npc=true/);
    await expect.poll(() => streams.length).toBeGreaterThan(count);
    expect(new URL(streams.at(-1)!).searchParams.get('npc')).toBe('true');
    await expect.poll(() => page.getByTestId('live-status').getAttribute('data-status')).toBe('live');
    await expect.poll(() => streamsOpen()).toBe(1);

    // Off: the stream closes, the URL forgets it.
    await toggle.click();
    await expect.poll(() => page.url()).not.toContain('live=on');
    // The switch renders its state a render after the URL changes: waited for, never read once.
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    await expect.poll(() => streamsOpen()).toBe(0);

    // On again, then away to another view: unmounting closes it too.
    await toggle.click();
    await expect.poll(() => streamsOpen()).toBe(1);
    await page.goto(`${gw.url}/explorer/#/status`);
    await expect.poll(() => streamsOpen()).toBe(0);
  });
});
