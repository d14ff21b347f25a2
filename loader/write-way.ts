/**
 * What a way of writing an index is given, and what it answers (write-index.ts chooses the way).
 */
import type { IndexDescription } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import type { RowsThatChanged } from './changes.ts';
import type { IdSet } from './id-set.ts';
import type { LineIndexHeader, LineIndexWriter } from './line-index.ts';
import type { MatchCounts, MatchEnd } from './line-match.ts';
import type { FileJob, FileLoadResult } from './load-file.ts';
import type { ParsePool } from './parse-pool.ts';
import type { IndexAction, IndexPlan } from './plan.ts';
import type { FileProgress, Progress } from './progress.ts';

/** What the merge over a line index counted and found: the rows that left, the documents to hold. */
export type Match = MatchCounts & MatchEnd;

/** The live index's line index (checked, line-index.ts `openLineIndex`), or why it has none it can trust. */
export type LiveLineIndex = { file: string; header: LineIndexHeader };
export type LineIndexState = LiveLineIndex | { reason: string };

/** One index of the load: what was done with it. */
export interface IndexResult extends Partial<FileLoadResult> {
  name: string;
  /** Seconds from the load's start to this file's start (files overlap). */
  startedAt?: number;
  index: string;
  action: IndexAction;
  /** An update: rows that left the file and were deleted. */
  removed?: number;
  /** Their ids, where the update knew them (over a line index). */
  leftIds?: string[];
  /** An update by lookup: the file's ids. */
  ids?: IdSet;
  /** An update over a line index: what the merge counted and found. */
  match?: Match;
  /** Why an update asked Elasticsearch about every line: its live index had no line index it could trust. */
  withoutLineIndex?: string;
  /** A planned update that found its file mostly changed, and built the index instead. */
  rebuilt?: string;
}

/** What a way wrote, and the rows that left and changed against the live index (`previous`), asked once the index is checked. */
export interface Written {
  result: IndexResult;
  changes(previous: string): Promise<RowsThatChanged>;
}

/** What the load gives each index it writes. */
export interface IndexJob extends Omit<FileJob, 'file' | 'progress' | 'previous' | 'lineIndex'> {
  plan: IndexPlan;
  description: IndexDescription<any>;
  file?: BundleFile;
  flushBytes: number;
  /** The live index's line index, where an update is planned. */
  lines?: LineIndexState;
  /** Worker threads a build may parse on (given for files large enough). */
  pool?: ParsePool;
  /** A new writer of the index's line index (a way that falls back opens another). */
  lineIndex(): Promise<LineIndexWriter>;
  /** The concrete index of another index of the load (a derived index's source). */
  indexOf(name: string): string;
  /** A derived index's source description. */
  descriptionOf(name: string): IndexDescription<any>;
  /** Documents the live index of a reused one holds. */
  liveDocuments: number;
  progress: Progress;
  /** Seconds from the load's start to this index's start. */
  startedAt: number;
}

/** What a way that reads a file is given: the job with its file, its bar and the live line index it merges against. */
export interface FileWayJob extends Omit<IndexJob, 'file' | 'progress'> {
  file: BundleFile;
  progress: FileProgress;
  against?: LiveLineIndex;
}

/** A way that reads the file; one that knows the rows that left and changed answers `changes`, else the live index is scanned against the new one. */
export type FileWay = (job: FileWayJob) => Promise<{ result: Omit<IndexResult, 'name' | 'action'>; changes?: Written['changes'] }>;
