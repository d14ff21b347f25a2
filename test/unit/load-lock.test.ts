/** Who may take over the load lock at once (loader/state.ts `ownerGone`): only a dead loader of this very host. */
import { expect, it } from 'vitest';
import { ownerGone } from '../../loader/state.ts';

const self = 'host-a:4242:abc123';
const alive = (running: number[]) => (pid: number) => running.includes(pid);

it('takes over the lease of a loader of this host whose process is gone', () => {
  expect(ownerGone('host-a:1000:zzz', self, alive([]))).toBe(true);
});

it('waits for a loader of this host that still runs, and for any loader of another host', () => {
  expect(ownerGone('host-a:1000:zzz', self, alive([1000]))).toBe(false);
  expect(ownerGone('host-b:1000:zzz', self, alive([]))).toBe(false);
});

it('takes over a lease its own process id held under another name (a container restarted as pid 1), never one of its own loaders\'', () => {
  expect(ownerGone('host-a:4242:old999', self, alive([4242]), new Set([self]))).toBe(true);
  expect(ownerGone(self, self, alive([]), new Set([self]))).toBe(false);
  // Two loaders of one process wait for each other like any two.
  expect(ownerGone('host-a:4242:other1', self, alive([4242]), new Set([self, 'host-a:4242:other1']))).toBe(false);
});

it('judges no owner it cannot read', () => {
  expect(ownerGone('another loader', self, alive([]))).toBe(false);
  expect(ownerGone('host-a:x:1', self, alive([]))).toBe(false);
});
