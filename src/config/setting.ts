/**
 * A setting, declared once: the variable it is read from, its default, how its text is read,
 * what it means and which programs read it. The README's configuration table is generated from
 * the declarations (table.ts), so a setting's meaning is written in its declaration and nowhere else.
 */
import type { Config } from './types.ts';
import { type Env, type Parse, textOf } from './parse.ts';

/**
 * The programs that read settings: the gateway (`node src/server.ts`, `npm start`), the loader
 * (`npm run load`), the provisioning of a development Elasticsearch (scripts/elasticsearch.ts),
 * `npm start`'s served bundle (scripts/served-bundle.ts) and the publisher (`npm run publish-bundle`).
 */
export type Program = 'gateway' | 'loader' | 'elasticsearch' | 'start' | 'publisher';

/** The text a variable would hold, or one made from other settings (read from the same environment). */
type Default = string | number | ((env: Env) => string);

interface Declared {
  /** The variable; several when they make one value together (then `read` reads them). */
  env: string | readonly [string, ...string[]];
  /** The variable read when `env` is unset (the AWS SDKs' fallbacks). */
  else?: string;
  /** The README's default where it is not the default itself, in code quotes. */
  documented?: string;
  readBy: readonly Program[];
  /** Set by the project itself, never by users: left out of the README. */
  internal?: true;
}

/** Its meaning; or, for a setting that shares a row of the table (`row`: the row's first variable), none: that row's first setting says what they mean together. */
type Prose = { meaning: string; row?: undefined } | { row: string; meaning?: undefined };

/** One variable's text through `parse` (the default's when unset), or several variables together through `read`. */
type Reading<V> = { parse: Parse<V>; read?: undefined } | { read: (env: Env) => V; parse?: undefined };

/** Only a value that may be absent (undefined when unset) goes without a default; a list's is `''`, none. */
type Defaulted<V> = undefined extends V ? { default?: Default } : { default: Default };

export type Setting<V> = Declared & Prose & Reading<V> & Defaulted<V>;

/** Settings by the key of the value each makes, in the README's order. */
export type Settings<T> = { readonly [K in keyof T]-?: Setting<T[K]> };

/** A part of `Config` and the settings it is read from. */
export interface Section<K extends keyof Config> {
  /** The `Config` keys it gives. */
  readonly keys: readonly K[];
  readonly settings: Readonly<Record<string, Setting<unknown>>>;
  read(env: Env): Pick<Config, K>;
}

export function variablesOf(setting: Setting<unknown>): readonly string[] {
  return typeof setting.env === 'string' ? [setting.env] : setting.env;
}

/** A setting's value in `env`: its variable's (or its `else`'s) text, else the default's, parsed; with neither, undefined. */
export function read<V>(setting: Setting<V>, env: Env): V {
  if (setting.read) return setting.read(env);
  const [first] = variablesOf(setting) as [string];
  const name = setting.else !== undefined && textOf(env, first) === undefined ? setting.else : first;
  const fallback = typeof setting.default === 'function' ? setting.default(env) : setting.default;
  const raw = textOf(env, name) ?? (fallback === undefined ? undefined : String(fallback));
  // No default only where V admits undefined (`Defaulted`).
  return raw === undefined ? (undefined as V) : setting.parse(raw, name, env);
}

/** Reads every setting of `settings`, in order (a refusal names the first bad variable). */
export function readAll<T>(settings: Settings<T>, env: Env): T {
  const entries = Object.entries<Setting<unknown>>(settings).map(([key, setting]) => [key, read(setting, env)]);
  return Object.fromEntries(entries) as T;
}

/** A section of flat `Config` keys, each read from its own setting. */
export function section<K extends keyof Config>(settings: Settings<Pick<Config, K>>): Section<K> {
  return { keys: Object.keys(settings) as K[], settings, read: (env) => readAll(settings, env) };
}
