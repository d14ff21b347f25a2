/**
 * Rules of our own in iptables' filter table, kept apart so that nothing else is ever touched:
 * each `openFirewall()` makes a chain `RNET-<pid>-<n>` and one jump to it at the head of OUTPUT
 * (on loopback every packet passes OUTPUT, and only there does iptables know which user's socket
 * sent it). Healing deletes exactly the rules a fault added; closing flushes and deletes the
 * chain and its jump. Closing also happens at the process's exit and on SIGINT/SIGTERM/SIGHUP,
 * and a chain whose process is gone (a crashed run) is removed by the next `openFirewall()`.
 *
 * Synchronous on purpose: each call is one short iptables run, and the exit hook cannot wait.
 */
import { spawnSync } from 'node:child_process';
import { alive } from '../elasticsearch.ts';

const CHAIN = /^-N (RNET-(\d+)-\d+)$/;
let opened = 0;

export interface Firewall {
  chain: string;
  /** Appends rules (match and target, without `-A CHAIN`); returns what deletes exactly them (once). */
  add(rules: string[][]): () => void;
  /** Packets our rules have dropped so far (every rule of the chain targets DROP). */
  dropped(): number;
  /** Flushes and deletes the chain and its jump. Idempotent. */
  close(): void;
}

/** Why this machine cannot have our rules, or undefined when it can. */
export function firewallUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `iptables is Linux's (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root: iptables needs CAP_NET_ADMIN';
  const probe = spawnSync('iptables', ['-w', '-S', 'OUTPUT'], { encoding: 'utf8' });
  if (probe.error) return `iptables not runnable (${(probe.error as NodeJS.ErrnoException).code}; Debian: apt-get install iptables)`;
  if (probe.status !== 0) return `iptables not permitted here: ${probe.stderr.trim().split('\n')[0]}`;
  return undefined;
}

export class FirewallUnavailable extends Error {
  override name = 'FirewallUnavailable';
}

/** A chain of our own, jumped to from OUTPUT. Throws FirewallUnavailable saying why it cannot. */
export function openFirewall(): Firewall {
  const why = firewallUnavailable();
  if (why) throw new FirewallUnavailable(why);
  removeLeftovers();
  const chain = `RNET-${process.pid}-${++opened}`;
  iptables(['-N', chain]);
  try {
    iptables(['-I', 'OUTPUT', '1', '-j', chain]);
  } catch (error) {
    iptables(['-X', chain]);
    throw error;
  }
  let closed = false;
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const close = () => {
    if (closed) return;
    closed = true;
    removeChain(chain);
    process.off('exit', close);
    for (const signal of signals) process.off(signal, onSignal);
  };
  // Rules removed first; then, if nobody else handles the signal, the default (die of it).
  const onSignal = (signal: NodeJS.Signals) => {
    close();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', close);
  for (const signal of signals) process.on(signal, onSignal);
  return {
    chain,
    add(rules) {
      if (closed) throw new Error(`firewall chain ${chain} is closed`);
      const added: string[][] = [];
      try {
        for (const rule of rules) {
          iptables(['-A', chain, ...rule]);
          added.push(rule);
        }
      } catch (error) {
        for (const rule of added) tryIptables(['-D', chain, ...rule]);
        throw error;
      }
      let removed = false;
      return () => {
        if (!closed && !removed) for (const rule of added) tryIptables(['-D', chain, ...rule]);
        removed = true;
      };
    },
    dropped() {
      if (closed) return 0;
      // -v -x -n: exact packet counts first on each rule line, after two header lines.
      const listing = iptables(['-L', chain, '-v', '-x', '-n']).split('\n').slice(2);
      return listing.reduce((sum, line) => sum + (Number(line.trim().split(/\s+/)[0]) || 0), 0);
    },
    close,
  };
}

/** Chains of ours whose process no longer runs: what a killed run left behind. */
function removeLeftovers(): void {
  for (const line of iptables(['-S']).split('\n')) {
    const match = CHAIN.exec(line.trim());
    if (match && !alive(Number(match[2]))) removeChain(match[1]!);
  }
}

function removeChain(chain: string): void {
  // The jump first: a chain still referenced cannot be deleted. Every copy of it, should there be two.
  while (tryIptables(['-D', 'OUTPUT', '-j', chain]));
  tryIptables(['-F', chain]);
  tryIptables(['-X', chain]);
}

/** `-w`: waits for the xtables lock rather than failing when another iptables runs. */
function iptables(args: string[]): string {
  const result = spawnSync('iptables', ['-w', ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`iptables ${args.join(' ')} failed: ${(result.stderr || String(result.error)).trim()}`);
  return result.stdout;
}

function tryIptables(args: string[]): boolean {
  return spawnSync('iptables', ['-w', ...args], { stdio: 'ignore' }).status === 0;
}
