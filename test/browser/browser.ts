/**
 * Driving Debian's Chromium for the explorer tests (playwright-core, no browser download):
 * one browser per test file, a page that fails the test on any request to another host or any
 * uncaught page error, screenshots into the git-ignored screenshots/ folder, and axe-core's
 * accessibility check.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'vitest';
import { type Browser, type Page, chromium } from 'playwright-core';

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../screenshots');

export async function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox'] });
}

export interface WatchedPage {
  page: Page;
  /** Requests to any origin other than the gateway's. */
  foreign: string[];
  /** Uncaught errors and console errors of the page. */
  errors: string[];
}

export async function openPage(browser: Browser, origin: string): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreign.push(url);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return { page, foreign, errors };
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's WCAG 2 A/AA rules on the page as it is; returns the serious and critical
 * violations. (Evaluated through the DevTools protocol, so the pages' CSP stays as served.)
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: any[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n: any) => String(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export interface WatchedBrowser extends WatchedPage {
  browser: Browser;
  /** Checks that nothing the pages did reached another host or threw, then closes the browser. */
  close(): Promise<void>;
}

/** Chromium with one watched page on the gateway at `origin`. */
export async function watchedBrowser(executablePath: string, origin: string): Promise<WatchedBrowser> {
  const browser = await launch(executablePath);
  const watched = await openPage(browser, origin);
  return {
    ...watched,
    browser,
    async close() {
      try {
        expect(watched.foreign).toEqual([]);
        expect(watched.errors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  };
}

