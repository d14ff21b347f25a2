/**
 * What Linux's /proc says of a process: its memory, the CPU it used, the processes it started
 * and which of them hold a given connection. Readings of a process that is gone reject, but for
 * the lists, which are empty then.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';

/** A memory figure of /proc/<pid>/status in MB: the resident set now (VmRSS) or at its peak (VmHWM). */
export async function vmMb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/** A process's resident set, MB. */
export function rssMb(pid: number): Promise<number> {
  return vmMb(pid, 'VmRSS');
}

/** CPU seconds (user + system) a process has used. */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The processes `pid`'s main thread started (a gateway's primary: its workers); none once it is gone. */
export async function childPids(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return children.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The processes among `pids` that hold a TCP connection from the IPv4 address `client` (their sockets and /proc/net/tcp). */
export async function pidsServing(pids: number[], client: string): Promise<number[]> {
  // /proc/net/tcp: "sl local rem st … inode"; addresses as little-endian hex with the port.
  const hex = client.split('.').map((n) => Number(n).toString(16).padStart(2, '0').toUpperCase()).reverse().join('');
  const table = await readFile('/proc/net/tcp', 'utf8');
  const inodes = new Set(table.split('\n').slice(1).map((line) => line.trim().split(/\s+/)).filter((f) => f[2]?.startsWith(`${hex}:`)).map((f) => f[9]));
  const serving: number[] = [];
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1])) {
        serving.push(pid);
        break;
      }
    }
  }
  return serving;
}
