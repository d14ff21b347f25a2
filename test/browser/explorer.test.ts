/**
 * The explorer and the API reference in a real Chromium, against a gateway on a loaded sample.
 * Every expectation comes from the bundle files (facts.jsonl, sources.jsonl, killmails.jsonl,
 * events.jsonl, entities.jsonl) or, for the reference, from the router itself — never from
 * the API the pages read. Screenshots of each step go to screenshots/ (git-ignored).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withNewRows } from '../../generator/new-rows.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type Bundle, cycleOf, cycleOfInstant, expectedEntities, inScope, instantNanos, lastWins, newestFirst, readBundle } from '../support/expect.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { launch, openPage, screenshot, seriousViolations, type WatchedBrowser, type WatchedPage, watchedBrowser } from './browser.ts';
import { actorsOf, expectedLabels, gridOf, obj, text } from '../support/killmail-labels.ts';
import { routeTemplates } from './routes.ts';
import { expectedBattles } from '../support/battles.ts';

const chromium = inject('chromium');
const PAGE_SIZE = 50; // web/explorer/components/timeline-view.tsx

let gw: TestGateway;
let bundle: Bundle;
let facts: BundleRow[];
let sourceKinds: Map<string, string>;
let events: BundleRow[];
let killmails: BundleRow[];
let npcByRelation: Set<string>;
let browser: Browser;
let watched: WatchedBrowser;
let page: Page;

describe.skipIf(!chromium)('the explorer in Chromium', () => {
  beforeAll(async () => {
    gw = await startTestGateway({ name: 'explorer', scale: 2, seed: 17 });
    bundle = await readBundle(gw.bundleDir);
    facts = await readAllRows(gw.bundleDir, 'facts.jsonl');
    // A source's kind: sources.jsonl, else the source object entity_sources.jsonl embeds (some
    // sources are only there).
    const embedded = (await readAllRows(gw.bundleDir, 'entity_sources.jsonl')).map((row) => row.source).filter(Boolean);
    sourceKinds = new Map([...embedded, ...(await readAllRows(gw.bundleDir, 'sources.jsonl'))].map((row) => [row.id, row.kind]));
    events = lastWins(await readAllRows(gw.bundleDir, 'events.jsonl'), (row) => row.id);
    killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (row) => row.id);
    const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
    npcByRelation = new Set(relations.filter((r) => r.predicate === 'killer' && String(r.objectEntityId).startsWith('enemy:')).map((r) => r.subjectEntityId));
    watched = await watchedBrowser(chromium, gw.url);
    ({ page, browser } = watched);
  }, 300_000);

  afterAll(async () => {
    await watched?.close();
    await gw?.close();
  });

  const open = async (hash: string) => {
    await page.goto(`${gw.url}/explorer/${hash}`);
  };
  const rowIds = (selector = '[data-testid=rows] tbody tr') => page.locator(selector).evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id')));

  it('renders the first results quickly (time to first render, logged)', async () => {
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await fresh.goto(`${gw.url}/explorer/`);
    await fresh.locator('[data-testid=results] li').first().waitFor();
    const timing = await fresh.evaluate(() => ({
      shell: performance.getEntriesByName('explorer-rendered')[0]?.startTime ?? -1,
      results: performance.now(),
    }));
    console.log(`[browser] explorer first render: shell ${timing.shell.toFixed(0)} ms, first results ${timing.results.toFixed(0)} ms after navigation`);
    expect(timing.shell).toBeGreaterThan(0);
    expect(timing.results).toBeLessThan(10_000);
    await fresh.close();
  });

  it('suggests the entity for a name typed with one typo; the entity page shows its facts as in facts.jsonl', async () => {
    const target = pickTypoTarget();
    const typed = withTypo(target.label);
    await open('#/search');
    const box = page.getByRole('combobox', { name: 'Search the registry' });
    await box.fill(typed);
    const option = page.locator(`#suggestions [role=option][data-id="${target.id}"]`);
    await option.waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator('#suggestions mark').count()).toBeGreaterThan(0);
    await screenshot(page, '01-autocomplete');
    // Keyboard: arrow down to the suggestion, Enter.
    const ids = await page.locator('#suggestions [role=option]').evaluateAll((items) => items.map((item) => item.getAttribute('data-id')));
    for (let i = 0; i <= ids.indexOf(target.id); i += 1) await box.press('ArrowDown');
    await expect.poll(() => box.getAttribute('aria-activedescendant')).toBe(`suggestion-${ids.indexOf(target.id)}`);
    await box.press('Enter');
    await page.waitForURL((url) => decodeURIComponent(url.hash) === `#/entities/${target.id}`);
    await checkFactsTable(target.id);
    await screenshot(page, '02-entity');
  });

  it('shows an entity reached from the results with every fact, its confidence, source kind and cycle', async () => {
    const target = pickTypoTarget();
    await open(`#/search?q=${encodeURIComponent(target.label)}`);
    await page.locator(`[data-testid=results] li[data-id="${target.id}"] a.title`).click();
    await checkFactsTable(target.id);
  });

  it('filters killmails with npc=true: exactly the proven NPC kills, and no name the registry does not prove', async () => {
    await open('#/killmails?cycles=all');
    await page.locator('[data-testid=rows]').waitFor();
    await page.locator('select[name=npc]').selectOption('true');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/npc=true/);
    await page.locator('[data-testid=rows]').waitFor();
    const isNpc = (r: BundleRow) => Boolean(r.killerTypeId || r.killer?.typeId || r.killer?.isNpc === true || npcByRelation.has(r.id));
    const expected = newestFirst(
      killmails.filter((r) => r.environment === 'stillness' && isNpc(r)),
      (r) => r.occurredAt,
      (r) => r.id,
    );
    expect(expected.length).toBeGreaterThan(3);
    await expect.poll(() => rowIds()).toEqual(expected.slice(0, PAGE_SIZE).map((r) => r.id));
    await screenshot(page, '03-killmails-npc');
    await checkKillers(expected.slice(0, PAGE_SIZE));
  });

  it('never turns a raw killer id into an NPC name: every killer as the registry resolved it', async () => {
    const expected = newestFirst(
      killmails.filter((r) => r.environment === 'stillness'),
      (r) => r.occurredAt,
      (r) => r.id,
    ).slice(0, PAGE_SIZE);
    // The bundle must hold a raw killer_id that is an NPC type number, or this proves nothing.
    expect(expected.some((r) => r.killer?.rawId && r.killer?.isNpc !== true && r.killer?.entityType === 'character')).toBe(true);
    await open('#/killmails?cycles=all');
    await expect.poll(() => rowIds()).toEqual(expected.map((r) => r.id));
    await checkKillers(expected);
  });

  it("lists a source's artefacts as source_artefacts.jsonl holds them", async () => {
    const artefacts = lastWins(await readAllRows(gw.bundleDir, 'source_artefacts.jsonl'), (row) => row.id);
    const counts = new Map<string, number>();
    for (const row of artefacts) counts.set(row.sourceId, (counts.get(row.sourceId) ?? 0) + 1);
    const [sourceId] = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    await open(`#/sources/${encodeURIComponent(sourceId)}`);
    const links = page.locator('[data-testid=artefacts] li a');
    await links.first().waitFor();
    const shown = await links.evaluateAll((items) => items.map((item) => decodeURIComponent(item.getAttribute('href')!.replace('#/artefacts/', ''))));
    expect(shown.sort()).toEqual(artefacts.filter((row) => row.sourceId === sourceId).map((row) => row.id).sort());
    await links.first().click();
    await expect.poll(() => page.locator('[data-testid=record]').innerText()).toContain('sha256');
  });

  it('opens the record a pasted identifier names: a killmail id, an address in capitals, a transaction digest', async () => {
    const killmail = killmails.find((r) => r.environment === 'stillness')!;
    const address = facts.find((r) => String(r.key).endsWith('_address') && /^0x[0-9a-f]+$/i.test(String(r.value)))!;
    const owners = new Set(facts.filter((r) => String(r.key).endsWith('_address') && String(r.value).toLowerCase() === String(address.value).toLowerCase()).map((r) => r.entityId));
    // A digest whose events the default environment lists (the events list is scoped; resolve is not).
    const byDigest = new Map<string, BundleRow[]>();
    for (const r of events) if (r.transactionDigest) byDigest.set(r.transactionDigest, [...(byDigest.get(r.transactionDigest) ?? []), r]);
    const stillness = [...byDigest].filter(([, rows]) => rows.every((r) => r.environment === 'stillness'));
    const [digest, digestRows] = stillness.find(([, rows]) => rows.length > 1) ?? stillness[0]!;
    const digestEvents = digestRows.map((r) => String(r.id));
    expect(owners.size, 'one entity holds the address').toBe(1);
    const cases: [string, (hash: string) => boolean][] = [
      [killmail.id, (hash) => hash === `#/killmails/${killmail.id}`],
      [`0x${String(address.value).slice(2).toUpperCase()}`, (hash) => hash === `#/entities/${[...owners][0]}`],
      [digest, (hash) => (digestEvents.length === 1 ? hash === `#/events/${digestEvents[0]}` : hash.startsWith('#/events?') && hash.includes(`transaction_digest=${digest}`))],
    ];
    for (const [value, expected] of cases) {
      await open('#/search');
      const box = page.getByRole('combobox', { name: 'Search the registry' });
      await box.fill(value);
      await box.press('Enter');
      await expect.poll(() => decodeURIComponent(new URL(page.url()).hash), { message: value, timeout: 10_000 }).toSatisfy(expected);
    }
    if (digestEvents.length > 1) await expect.poll(async () => (await rowIds()).toSorted()).toEqual(digestEvents.toSorted());
  });

  it("shows each killmail's labels and proof link, and narrows the list to one label as the files say", async () => {
    const labels = expectedLabels(killmails, await readAllRows(gw.bundleDir, 'relations.jsonl'));
    const want = killmails.filter((r) => r.environment === 'stillness' && labels.get(r.id)!.includes('same_tribe')).map((r) => r.id);
    expect(want.length).toBeGreaterThan(0);
    await open('#/killmails?cycles=all&label=same_tribe');
    // The first page: as many rows as there are (up to a page), each one of them.
    await expect.poll(async () => (await rowIds()).length).toBe(Math.min(want.length, PAGE_SIZE));
    for (const id of await rowIds()) expect(want).toContain(id);
    const shown = await page.locator('[data-testid=rows] tbody tr').evaluateAll((rows) =>
      rows.map((row) => ({ id: row.getAttribute('data-id'), labels: [...row.querySelectorAll('[data-label]')].map((tag) => tag.getAttribute('data-label')), proof: row.querySelector('a.proof')?.getAttribute('href') ?? null })),
    );
    for (const row of shown) {
      expect(row.labels, row.id!).toEqual(labels.get(row.id!));
      const eventId = text(obj(killmails.find((k) => k.id === row.id)!.raw)?.sourceEventId);
      expect(row.proof === null ? undefined : decodeURIComponent(row.proof), row.id!).toBe(eventId === undefined ? undefined : `#/events/${eventId}`);
    }
  });

  it("draws a character's activity: each side's 7 x 24 grid as the files count it", async () => {
    const counts = new Map<string, number>();
    for (const row of killmails) if (row.environment === 'stillness') for (const id of [actorsOf(row).victimId, ...actorsOf(row).killerCharacters]) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    const known = new Set(bundle.entities.filter((e: BundleRow) => e.entityType === 'character').map((e: BundleRow) => e.id));
    const id = [...counts].filter(([c]) => known.has(c)).sort((a, b) => b[1] - a[1])[0]![0];
    const mine = killmails.filter((r) => r.environment === 'stillness');
    const want = {
      kills: gridOf(mine.filter((r) => actorsOf(r).killerIds.includes(id))),
      losses: gridOf(mine.filter((r) => actorsOf(r).victimId === id)),
    };
    await open(`#/entities/${encodeURIComponent(id)}`);
    await page.locator('[data-testid=activity] table.heat').first().waitFor();
    for (const side of ['kills', 'losses'] as const) {
      const drawn = await page.locator(`[data-side=${side}] table.heat tbody tr`).evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => Number(cell.getAttribute('data-count')))));
      expect(drawn, side).toEqual(want[side]);
    }
    await screenshot(page, '05-activity');
  });

  it('lists the battles of the files, and draws one: its sides side by side, a mark per killmail on its timeline', async () => {
    const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
    const battles = expectedBattles(killmails, relations, 15);
    expect(battles.length).toBeGreaterThan(1);
    await open('#/battles');
    await page.locator('[data-testid=battles] tbody tr').first().waitFor();
    expect(await rowIds('[data-testid=battles] tbody tr')).toEqual(battles.slice(0, 25).map((b) => b.id));
    await expect.poll(() => page.locator('[data-testid=battle-count]').textContent()).toBe(`${battles.length} battles`);
    await screenshot(page, '06-battles');
    const biggest = battles.toSorted((a, b) => b.killIds.length - a.killIds.length || b.sides.length - a.sides.length)[0]!;
    await page.locator(`[data-testid=battles] tr[data-id="${biggest.id}"] a.row-id`).click();
    await page.locator('[data-testid=battle-killmails] tbody tr').first().waitFor();
    expect(await rowIds('[data-testid=battle-killmails] tbody tr')).toEqual(biggest.killIds);
    expect(await page.locator('[data-testid=timeline-mark]').count()).toBe(biggest.killIds.length);
    const sides = await page.locator('.sides [data-side]').evaluateAll((nodes) =>
      nodes.map((node) => ({ side: node.getAttribute('data-side'), links: [...node.querySelectorAll('ul a')].map((a) => decodeURIComponent(a.getAttribute('href')!.replace('#/entities/', ''))) })),
    );
    expect(sides).toEqual(biggest.sides.map((s) => ({ side: s.side, links: [...s.tribes, ...s.characters] })));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, '07-battle');
  });

  it("names the other end of each relation as entities.jsonl does, an id where it has no entity", async () => {
    const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
    const byId = new Map(bundle.entities.map((e: BundleRow) => [String(e.id), e]));
    const counts = new Map<string, number>();
    for (const r of relations) if (byId.has(r.subjectEntityId) && byId.get(r.subjectEntityId)!.entityType === 'character') counts.set(r.subjectEntityId, (counts.get(r.subjectEntityId) ?? 0) + 1);
    const id = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const environment = byId.get(id)!.environment;
    await open(`#/entities/${encodeURIComponent(id)}`);
    await page.locator('[data-testid=relations] a[data-id]').first().waitFor();
    const links = await page.locator('[data-testid=relations] a[data-id]').evaluateAll((as) => as.map((a) => ({ id: a.getAttribute('data-id')!, text: a.textContent })));
    expect(links.length).toBeGreaterThan(0);
    let named = 0;
    for (const link of links) {
      const other = byId.get(link.id);
      const want = other && other.environment === environment ? String(other.displayName ?? other.name ?? other.id) : link.id;
      expect(link.text, link.id).toBe(want);
      if (want !== link.id) named += 1;
    }
    expect(named, 'some ends are named').toBeGreaterThan(0);
  });

  it('opens a killmail and its raw record', async () => {
    const row = killmails.find((r) => r.environment === 'stillness' && r.raw)!;
    await open(`#/killmails/${encodeURIComponent(row.id)}`);
    await page.getByRole('link', { name: 'Raw record as reported' }).click();
    // The view this test means: the raw record's heading, then its fields (never the semantic view's, see useAsync).
    await page.getByRole('heading', { name: /raw record as reported/ }).waitFor();
    await page.locator('[data-testid=record]').waitFor();
    const text = await page.locator('[data-testid=record]').innerText();
    expect(text).toContain('raw');
    expect(text).not.toContain('summaryText');
  });

  it('narrows the events to exactly the day of a clicked timeline bar', async () => {
    const all = events.filter((r) => r.environment === 'stillness');
    const byDay = new Map<string, BundleRow[]>();
    for (const row of all) {
      const day = dayOf(row.occurredAt);
      byDay.set(day, [...(byDay.get(day) ?? []), row]);
    }
    // A day that fits one page and is not the only one.
    const [day, rows] = [...byDay.entries()].filter(([, r]) => r.length >= 2 && r.length <= PAGE_SIZE).sort(([a], [b]) => a.localeCompare(b)).at(-1)!;
    await open('#/events?cycles=all');
    const over = page.locator('[data-testid=timeline] .u-over');
    await over.waitFor();
    await screenshot(page, '04-events-timeline');
    const bars = new Map<string, number>(JSON.parse((await over.getAttribute('data-bars'))!));
    expect(bars.has(day), `bar for ${day}`).toBe(true);
    const box = (await over.boundingBox())!;
    await over.click({ position: { x: bars.get(day)!, y: box.height - 4 } });
    await page.waitForURL((url) => decodeURIComponent(url.hash).includes(`since=${day}T00:00:00Z`));
    const expected = newestFirst(rows, (r) => r.occurredAt, (r) => r.id).map((r) => r.id);
    await expect.poll(() => rowIds()).toEqual(expected);
    await expect.poll(() => page.locator('[data-testid=count]').getAttribute('data-count')).toBe(String(expected.length));
    await screenshot(page, '05-events-day');
  });

  it('pages forward and back through the events', async () => {
    const expected = newestFirst(
      events.filter((r) => r.environment === 'stillness' && inScope(eventCycle(r), 'default', bundle.currentCycle)),
      (r) => r.occurredAt,
      (r) => r.id,
    ).map((r) => r.id);
    expect(expected.length).toBeGreaterThan(2 * PAGE_SIZE);
    await open('#/events');
    await expect.poll(() => rowIds()).toEqual(expected.slice(0, PAGE_SIZE));
    await page.getByRole('link', { name: 'Next →' }).click();
    await expect.poll(() => rowIds()).toEqual(expected.slice(PAGE_SIZE, 2 * PAGE_SIZE));
    await page.getByRole('link', { name: 'Next →' }).click();
    await expect.poll(() => rowIds()).toEqual(expected.slice(2 * PAGE_SIZE, 3 * PAGE_SIZE));
    await page.getByRole('link', { name: '← Previous' }).click();
    await expect.poll(() => rowIds()).toEqual(expected.slice(PAGE_SIZE, 2 * PAGE_SIZE));
    await page.getByRole('link', { name: '← Previous' }).click();
    await expect.poll(() => rowIds()).toEqual(expected.slice(0, PAGE_SIZE));
    await expect(page.locator('.pager .page-no').innerText()).resolves.toBe('Page 1');
  });

  it('offers the filtered list as CSV and NDJSON: the link downloads every matching row, not only the page', async () => {
    const kind = events[0]!.kind as string;
    const expected = newestFirst(events.filter((r) => r.environment === 'stillness' && r.kind === kind), (r) => r.occurredAt, (r) => r.id).map((r) => r.id);
    await open(`#/events?cycles=all&kind=${encodeURIComponent(kind)}`);
    const csv = page.getByTestId('download-csv');
    await csv.waitFor();
    const href = (await csv.getAttribute('href'))!;
    expect(new URL(href, gw.url).searchParams.get('kind')).toBe(kind);
    expect(await page.getByTestId('download-ndjson').getAttribute('href')).toBe(href.replace('format=csv', 'format=ndjson'));
    // Fetched as the page would download it (same origin, the link's own URL).
    const response = await page.request.get(new URL(href, page.url()).toString());
    expect(response.headers()['content-disposition']).toMatch(/^attachment; filename="events_.*\.csv"$/);
    const [header, ...records] = parse(await response.text()) as string[][];
    expect(header![0]).toBe('id');
    expect(records.map((r) => r[0])).toEqual(expected);
  });

  it('shows the live generation on the status panel', async () => {
    await open('#/status');
    await expect.poll(() => page.locator('[data-testid=generation]').innerText()).toBe(gw.load.generation);
    await expect(page.locator('[data-testid=readiness] .status-word').first().innerText()).resolves.toBe('ready');
    await screenshot(page, '06-status');
  });

  it('lists the search results of the default scope with their count', async () => {
    const expected = expectedEntities(bundle, 'default');
    await open('#/search');
    await expect.poll(() => rowIds('[data-testid=results] li')).toEqual(expected.slice(0, 20));
    await expect.poll(() => page.locator('[data-testid=count]').getAttribute('data-count')).toBe(String(expected.length));
    await screenshot(page, '07-search');
  });

  it('shows facet counts as the bundle holds them, and a chip narrows the results', async () => {
    const inDefault = bundle.entities.filter((e) => e.environment === 'stillness' && inScope(cycleOf(e.cycle), 'default', bundle.currentCycle));
    const byType = new Map<string, number>();
    for (const e of inDefault) byType.set(e.entityType, (byType.get(e.entityType) ?? 0) + 1);
    // A fresh load (the view before may be this one already).
    await page.goto('about:blank');
    const groupRequests: string[] = [];
    const listen = (request: { url(): string }) => {
      if (request.url().includes('group_by=')) groupRequests.push(request.url());
    };
    page.on('request', listen);
    await open('#/search');
    const chips = page.locator('[data-facet=type] a.chip');
    await chips.first().waitFor();
    // The first chips show; the rest on request.
    expect(await chips.count()).toBe(Math.min(12, byType.size));
    if (byType.size > 12) await page.locator('[data-facet=type]').getByRole('button', { name: `Show all ${byType.size}` }).click();
    const shown = await chips.evaluateAll((items) => items.map((item) => [item.getAttribute('data-key'), Number(item.querySelector('.n')!.textContent!.replace(/,/g, ''))]));
    expect(new Map(shown as [string, number][])).toEqual(byType);
    const uncycled = inDefault.filter((e) => cycleOf(e.cycle) === undefined).length;
    await expect(page.locator('[data-facet=cycles] .unknown-chip .n').innerText()).resolves.toBe(String(uncycled));
    page.off('request', listen);
    // The three facets come from one request.
    expect(groupRequests).toHaveLength(1);
    expect(decodeURIComponent(groupRequests[0]!)).toContain('group_by=entityType,environment,cycle');
    await page.locator('[data-facet=type] a.chip[data-key=character]').click();
    const characters = expectedEntities(bundle, 'default', (e) => e.entityType === 'character');
    await expect.poll(() => page.locator('[data-testid=count]').getAttribute('data-count')).toBe(String(characters.length));
    await expect.poll(() => rowIds('[data-testid=results] li')).toEqual(characters.slice(0, 20));
  });

  it.each([
    ['search', '#/search?q=a'],
    ['entity', ''],
    ['events', '#/events?cycles=all'],
    ['killmails', '#/killmails?cycles=all&npc=true'],
    ['status', '#/status'],
  ])('has no serious or critical accessibility violation on the %s view (axe-core)', async (name, hash) => {
    await open(hash || `#/entities/${encodeURIComponent(pickTypoTarget().id)}`);
    await page.locator('main h1').first().waitFor();
    await page.locator('.loading').waitFor({ state: 'detached' });
    // The legend open, so its badges are checked too.
    if (name === 'entity') await page.locator('.legend summary').click();
    expect(await seriousViolations(page)).toEqual([]);
  });

  // Last: it loads a second bundle, which every test above would read.
  it('pins every page to a kept bundle from the status panel: the URL says so, links keep it, the way back unpins; a tribe shows who joined and left since', async () => {
    const next = await mkdtemp(path.join(tmpdir(), 'explorer-next-'));
    // A page of its own: the one above holds the bundle list of before the load in its HTTP cache (max-age).
    const watchedPin = await openPage(browser, gw.url);
    const before = page;
    page = watchedPin.page;
    try {
      // And a tribe's first member leaves it, while the first member of another tribe moves to it.
      const belongs = (await readAllRows(gw.bundleDir, 'relations.jsonl')).filter((r) => r.predicate === 'belongs_to');
      const tribe = String(belongs[0]!.objectEntityId);
      const joiner = belongs.find((r) => r.objectEntityId !== tribe)!;
      await writeNextExport(gw.bundleDir, next, {
        killmails: withNewRows('pinned'),
        relations: async function* (rows) {
          for await (const row of rows) {
            if (row.predicate === 'belongs_to' && row.subjectEntityId === belongs[0]!.subjectEntityId && row.objectEntityId === tribe) continue;
            const moves = row.predicate === 'belongs_to' && row.subjectEntityId === joiner.subjectEntityId && row.objectEntityId === joiner.objectEntityId;
            yield moves ? { ...row, objectEntityId: tribe } : row;
          }
        },
      });
      await gw.loadNext(next);
      // Who joined and left the tribe, from the two bundles' files.
      const pairs = async (dir: string) => new Set((await readAllRows(dir, 'relations.jsonl')).filter((r) => r.predicate === 'belongs_to' && r.objectEntityId === tribe).map((r) => String(r.subjectEntityId)));
      const [was, is] = [await pairs(gw.bundleDir), await pairs(next)];
      const changed = [...new Set([...was, ...is])].filter((c) => was.has(c) !== is.has(c)).map((c) => [c, is.has(c) ? 'joined' : 'left']);
      expect(changed.map(([, change]) => change).sort()).toEqual(['joined', 'left']);
      await open(`#/entities/${encodeURIComponent(tribe)}`);
      await page.locator('[data-testid=memberships] ul').waitFor();
      const shown = await page.locator('[data-testid=memberships] li').evaluateAll((items) => items.map((li) => [li.querySelector('a')!.textContent, li.getAttribute('data-change')]));
      expect(shown.sort()).toEqual(changed.sort());
      await open(`#/entities/${encodeURIComponent(tribe)}?bundle=${await bundleIdOf(gw.bundleDir)}`);
      await expect.poll(() => page.locator('[data-testid=memberships]').innerText()).toContain('No earlier bundle');
      const first = await bundleIdOf(gw.bundleDir);
      const inScope = (rows: BundleRow[]) => rows.filter((r) => r.environment === 'stillness').length;
      const [then, now] = [inScope(killmails), inScope(lastWins(await readAllRows(next, 'killmails.jsonl'), (r) => r.id))];
      expect(now).toBeGreaterThan(then);

      await open('#/status');
      await page.locator(`[data-testid=bundles] tr[data-id="${first}"] [data-testid=pin]`).click();
      await page.waitForURL(new RegExp(`bundle=${first}`));
      await expect.poll(() => page.locator('[data-testid=pinned-bundle]').innerText()).toBe(first.slice(0, 16));
      // A link of the header keeps the pin; the count is the first bundle's.
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Killmails' }).click();
      await page.waitForURL(/#\/killmails\?.*bundle=/);
      await page.locator('[data-testid=rows]').waitFor();
      await open(`#/killmails?cycles=all&bundle=${first}`);
      await expect.poll(() => page.locator('[data-testid=count]').getAttribute('data-count')).toBe(String(then));
      expect(await page.locator('[data-testid=pinned]').count()).toBe(1);
      // No live switch: nothing new comes to a kept bundle.
      expect(await page.locator('[data-testid=live-switch]').count()).toBe(0);
      await screenshot(page, '11-pinned');
      await page.locator('[data-testid=unpin]').click();
      await page.waitForURL((url) => !url.hash.includes('bundle='));
      await expect.poll(() => page.locator('[data-testid=count]').getAttribute('data-count')).toBe(String(now));
      expect(await page.locator('[data-testid=pinned]').count()).toBe(0);
      expect(watchedPin.foreign).toEqual([]);
      expect(watchedPin.errors).toEqual([]);
    } finally {
      page = before;
      await watchedPin.page.close();
      await rm(next, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!chromium)('the API reference in Chromium', () => {
  let ref: WatchedPage;
  let server: TestGateway;
  let docsBrowser: Browser;
  beforeAll(async () => {
    server = await startTestGateway({ name: 'docs', scale: 1, seed: 3 });
    docsBrowser = await launch(chromium);
    ref = await openPage(docsBrowser, server.url);
  }, 300_000);
  afterAll(async () => {
    expect(ref?.foreign ?? []).toEqual([]);
    await docsBrowser?.close();
    await server?.close();
  });

  it('lists every route of the router, and "Try it out" calls this gateway', async () => {
    const p = ref.page;
    await p.goto(`${server.url}/docs/`);
    await p.locator('body[data-docs-ready=true]').waitFor();
    // Swagger UI renders only the operations near the viewport: walk down the page a screen at a
    // time and collect the paths seen.
    const seen = new Set<string>();
    const methods = new Set<string>();
    const win = () => p.evaluate(() => ({ y: (globalThis as any).scrollY as number, height: (globalThis as any).document.body.scrollHeight as number }));
    for (let rounds = 0; rounds < 400; rounds += 1) {
      for (const path of await p.locator('.opblock .opblock-summary-path').evaluateAll((items) => items.map((item) => item.getAttribute('data-path')))) seen.add(String(path));
      for (const method of await p.locator('.opblock .opblock-summary-method').allInnerTexts()) methods.add(method);
      const { y, height } = await win();
      if (y + 900 >= height) break;
      await p.mouse.wheel(0, 600);
      await p.waitForTimeout(120);
    }
    expect([...seen].sort()).toEqual((await routeTemplates()).sort());
    // Grouped by family, in the document's order; each operation once (HEAD is not listed again).
    const tags = await p.locator('.opblock-tag-section .opblock-tag').evaluateAll((items) => items.map((item) => item.getAttribute('data-tag')));
    expect(tags).toEqual(['entities', 'typed collections', 'current state', 'provenance', 'events', 'killmails', 'operations', 'exports', 'bundles', 'meta']);
    expect([...methods]).toEqual(['GET']);
    await p.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await screenshot(p, '08-docs', false);
    const health = p.locator('.opblock-get').filter({ has: p.locator('[data-path="/v1/health"]') });
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Execute' }).click();
    await expect.poll(() => health.locator('.live-responses-table tbody .response-col_status').first().innerText()).toBe('200');
    await health.scrollIntoViewIfNeeded();
    await screenshot(p, '09-docs-try-it', false);
  });

  it('has no serious or critical accessibility violation, an operation open and tried (axe-core)', async () => {
    expect(await seriousViolations(ref.page)).toEqual([]);
  });
});

/**
 * Each killer cell against killmails.jsonl: a resolved killer by its display name (NPC tag only
 * when the row says `isNpc`); an unresolved one by the display name as exported (`Unknown`),
 * marked unresolved, with no enemy's name anywhere in the cell.
 */
async function checkKillers(rows: BundleRow[]): Promise<void> {
  const enemyNames = new Set(bundle.entities.filter((e) => e.entityType === 'enemy').flatMap((e) => [e.displayName, e.name]).filter(Boolean) as string[]);
  for (const row of rows) {
    const cell = page.locator(`[data-testid=rows] tr[data-id="${row.id}"] td[data-role=killer]`);
    const actor = cell.locator('.actor');
    const name = (await cell.locator('.actor-name').innerText()).trim();
    const text = await cell.innerText();
    await expect(cell.locator('.tag.npc').count(), row.id).resolves.toBe(row.killer?.isNpc === true ? 1 : 0);
    if (row.killer?.entityId) {
      expect(name, row.id).toBe(row.killer.displayName);
      await expect(actor.getAttribute('data-resolved')).resolves.toBe('true');
      if (row.killer.isNpc !== true) for (const enemy of enemyNames) expect(text, row.id).not.toContain(enemy);
    } else {
      expect(name, row.id).toBe(row.killer?.displayName ?? 'Unknown');
      await expect(actor.getAttribute('data-resolved')).resolves.toBe('false');
      for (const enemy of enemyNames) expect(text, row.id).not.toContain(enemy);
    }
  }
}

/** An entity of the default scope whose two-word label is unique, with facts: the typo test's target. */
function pickTypoTarget(): { id: string; label: string } {
  const labels = new Map<string, number>();
  for (const e of bundle.entities) {
    const label = String(e.displayName ?? e.name ?? '').toLowerCase();
    labels.set(label, (labels.get(label) ?? 0) + 1);
  }
  const withFacts = new Set(facts.map((f) => f.entityId));
  const candidates = bundle.entities
    .filter((e) => e.environment === 'stillness' && inScope(cycleOf(e.cycle), 'default', bundle.currentCycle) && withFacts.has(e.id))
    .map((e) => ({ id: String(e.id), label: String(e.displayName ?? e.name ?? '') }))
    .filter(({ label }) => /^[A-Za-z]{6,} [A-Za-z]{3,}$/.test(label) && labels.get(label.toLowerCase()) === 1)
    .sort((a, b) => a.id.localeCompare(b.id));
  expect(candidates.length, 'a two-word unique name').toBeGreaterThan(0);
  return candidates[0]!;
}

/** One substituted letter inside the first word (which has six letters or more). */
function withTypo(label: string): string {
  const at = 3;
  const replacement = label[at]!.toLowerCase() === 'x' ? 'q' : 'x';
  return `${label.slice(0, at)}${replacement}${label.slice(at + 1)}`;
}

const eventCycle = (row: BundleRow) => cycleOf(row.cycle) ?? cycleOfInstant(row.occurredAt);

/** The UTC day of an instant with any offset and fraction. */
function dayOf(instant: string): string {
  return new Date(Number(instantNanos(instant) / 1_000_000n)).toISOString().slice(0, 10);
}

/** The facts table of the entity page against facts.jsonl (last row per key and source wins). */
async function checkFactsTable(entityId: string): Promise<void> {
  const expected = lastWins(
    facts.filter((f) => f.entityId === entityId),
    (f) => `${f.key}\u0000${f.sourceId}`,
  );
  expect(expected.length).toBeGreaterThan(0);
  const table = page.locator('[data-testid=facts]');
  await table.waitFor();
  const shown = await table.locator('tbody tr').evaluateAll((rows) =>
    rows.map((row) => ({
      key: row.getAttribute('data-key'),
      source: row.getAttribute('data-source'),
      value: row.querySelector('td.value')?.textContent ?? '',
      confidence: row.querySelector('td.confidence')?.textContent ?? '',
      sourceKind: row.querySelector('td.source-kind')?.textContent ?? '',
      cycle: row.querySelector('td.cycle')?.textContent ?? '',
    })),
  );
  const order = (a: { key: unknown; source: unknown }, b: { key: unknown; source: unknown }) => `${a.key}\u0000${a.source}`.localeCompare(`${b.key}\u0000${b.source}`);
  const want = expected
    .map((f) => ({
      key: String(f.key),
      source: String(f.sourceId),
      value: typeof f.value === 'string' || (typeof f.value === 'number' && Number.isSafeInteger(f.value)) || typeof f.value === 'boolean' ? String(f.value) : f.value === null ? 'null' : undefined,
      confidence: typeof f.confidence === 'string' && f.confidence !== '' ? f.confidence : 'unknown',
      sourceKind: sourceKinds.get(f.sourceId) ?? 'unknown',
      cycle: cycleOf(f.cycle) === undefined ? 'uncycled' : String(f.cycle),
    }))
    .sort(order);
  const got = shown.sort(order).map((row, index) => (want[index]?.value === undefined ? { ...row, value: undefined } : row));
  expect(got).toEqual(want);
  // The legend names the five labels.
  await expect(page.locator('.legend [data-confidence]').evaluateAll((items) => items.map((item) => item.textContent))).resolves.toEqual(['verified', 'probable', 'reported', 'stale', 'unknown']);
}
