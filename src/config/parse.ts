/**
 * How a setting's text becomes its value: the readers the declarations are built from. Each
 * refusal is a `ConfigError` naming the variable, so start-up fails with one line, never later
 * on a request.
 */

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads a variable's text (trimmed, never empty); `name` is the variable it came from, for messages. */
export type Parse<V> = (raw: string, name: string, env: Env) => V;

/** A variable's text, trimmed; undefined when unset or blank. */
export function textOf(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** The text as it is. */
export const text: Parse<string> = (raw) => raw;

/** A whole number from `min` to `max`. */
export function int(min: number, max: number): Parse<number> {
  return (raw, name) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
}

/** A value counted in larger units (KB, MB, GB) than the bytes kept. */
export function scaled(parse: Parse<number>, unit: number): Parse<number> {
  return (raw, name, env) => parse(raw, name, env) * unit;
}

/** `off` (any case) → undefined, for a limit that can be turned off. */
export function orOff<V>(parse: Parse<V>): Parse<V | undefined> {
  return (raw, name, env) => (raw.toLowerCase() === 'off' ? undefined : parse(raw, name, env));
}

/** One of `choices`. */
export function oneOf<T extends string>(choices: readonly T[]): Parse<T> {
  return (raw, name) => {
    if (!(choices as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

/** Text that matches `pattern`; `what` says in the refusal what it must be. */
export function matching(pattern: RegExp, what: string): Parse<string> {
  return (raw, name) => {
    if (!pattern.test(raw)) throw new ConfigError(`${name} must be ${what}, got "${raw}"`);
    return raw;
  };
}

/** A URL as a refusal may show it: never the credentials it may carry. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//…@');
}

/** `90s`, `5m`, `1h`, `500ms` → milliseconds (a bare number is seconds). */
export function parseDuration(name: string, raw: string, minMs: number): number {
  const match = /^(\d{1,9})\s*(ms|s|m|h)?$/.exec(raw.trim());
  const ms = match ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'] : NaN;
  if (!(ms >= minMs)) throw new ConfigError(`${name} must be a duration of at least ${minMs} ms such as 60s, 5m or 1h, got "${raw}"`);
  return ms;
}

/** A duration (`parseDuration`) of at least `minMs`. */
export function duration(minMs: number): Parse<number> {
  return (raw, name) => parseDuration(name, raw, minMs);
}
