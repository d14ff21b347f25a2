/**
 * `node scripts/test-summary.ts <vitest JSON report> [failed checks outside vitest]`: the closing
 * line CI's judge reads, `N passed, N failed, N skipped`, computed from the report vitest wrote
 * (vitest.config.ts), never from its coloured console summary, plus the checks CI ran beside it
 * that failed (the fuzzing pass, the rehearsal). Exits non-zero when the report is missing or unreadable, or when
 * it records a failure or no test at all, or when a check beside it failed.
 */
import { readFileSync } from 'node:fs';

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTests: number;
  success: boolean;
}

const file = process.argv[2];
const failedBeside = Number(process.argv[3] ?? 0);
let report: Report;
try {
  report = JSON.parse(readFileSync(file ?? '', 'utf8')) as Report;
  if (!Number.isInteger(report.numPassedTests) || !Number.isInteger(report.numFailedTests)) throw new Error('not a vitest JSON report');
} catch (error) {
  console.error(`test-summary: no readable test report at ${file ?? '(no path given)'}: ${(error as Error).message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const skipped = report.numPendingTests + report.numTodoTests;
const passedAll = report.numFailedTests === 0 && report.numPassedTests > 0 && report.success;
// A run that failed outside every test (its global setup, an unhandled error) counts as one failure, never as `0 failed`.
const failed = (passedAll ? 0 : Math.max(report.numFailedTests, 1)) + failedBeside;
const ok = failed === 0;
console.log(`${report.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok ? 0 : 1);
