/**
 * Before the browser tests: build the pages (web/build.ts, ~2 s, so the tests never run stale
 * files) and find Debian's Chromium. Without /usr/bin/chromium the browser tests are skipped
 * with a message saying so, except under CI (CI=true), where .ci/run installs it: there a
 * missing browser fails the run instead of passing it silently.
 */
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { buildWeb } from '../../web/build.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the Chromium to drive, or '' when there is none (the browser tests skip). */
    chromium: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  await buildWeb({ quiet: true });
  if (existsSync(CHROMIUM)) {
    project.provide('chromium', CHROMIUM);
    return undefined;
  }
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium before the tests`);
  const say = () =>
    console.warn(
      `\n[browser] SKIPPING the explorer's browser tests: ${CHROMIUM} is missing. Install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH) to run them.\n`,
    );
  say();
  project.provide('chromium', '');
  // Said again at the end of the run, where it cannot scroll out of sight.
  return say;
}
