/**
 * Every section, in the README table's order, and the sections each program reads: a program
 * is refused only over a setting it reads (a bad RATE_LIMIT never stops a load).
 */
import { admission } from './admission.ts';
import { cycles } from './cycles.ts';
import { elasticsearch } from './elasticsearch.ts';
import { files } from './files.ts';
import { gateway } from './gateway.ts';
import { limits } from './limits.ts';
import { loader } from './loader.ts';
import { store } from './store.ts';
import { streams } from './streams.ts';
import type { Config } from './types.ts';

export const SECTIONS = { elasticsearch, files, gateway, cycles, store, limits, streams, admission, loader };

export type SectionName = keyof typeof SECTIONS;
export const SECTION_NAMES = Object.keys(SECTIONS) as SectionName[];

/** The part of `Config` the sections `N` give. */
export type ConfigOf<N extends SectionName> = Pick<Config, (typeof SECTIONS)[N]['keys'][number]>;

// Every Config key comes from a section: one that none gives fails to compile here, named.
type Missing = Exclude<keyof Config, keyof ConfigOf<SectionName>>;
true satisfies [Missing] extends [never] ? true : Missing;

/** What the loader reads (the gateway reads every section). */
export const LOADER_SECTIONS = ['elasticsearch', 'files', 'cycles', 'store', 'loader'] as const satisfies readonly SectionName[];
export type LoaderConfig = ConfigOf<(typeof LOADER_SECTIONS)[number]>;
