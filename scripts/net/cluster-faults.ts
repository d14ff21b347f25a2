/**
 * Bad links between the nodes of a local cluster (scripts/elasticsearch-cluster.ts), made with
 * iptables rules in a chain of our own (./firewall.ts).
 *
 * Every node listens on its own loopback address and runs as its own user, but its outgoing
 * connections leave from 127.0.0.1 (Elasticsearch binds none), so a rule names a node by the
 * user that owns the sending socket, and a peer by its address and ports. Ports too: they are
 * this cluster's own, so another cluster on the same addresses and users is never hit.
 *
 * - A cut between A and B drops what A's user sends to B's ports and what B's user sends to A's:
 *   every connection between them, established ones included, stalls as on a cut cable (TCP
 *   retransmits into nothing) and resumes once healed. Nothing else of A or B is touched: the
 *   gateways still reach both.
 * - Loss on A drops a random share of every packet A's user sends from its ports or to a peer,
 *   and of every packet sent to A's ports, whoever sends it.
 *
 * A fault that cannot be made here comes back as `{ made: false, why }`, never as made.
 */
import type { ClusterNode } from '../elasticsearch-cluster.ts';
import { type Firewall, firewallUnavailable, openFirewall } from './firewall.ts';

export type Fault = { made: true; describe: string; heal(): void } | { made: false; describe: string; why: string };

export interface ClusterNetwork {
  /** Why no fault can be made on this machine, or undefined. */
  unavailable: string | undefined;
  /** Cuts every link between a node of `side` and a node of `rest` (default: every other node). */
  partition(side: ClusterNode[], rest?: ClusterNode[]): Fault;
  /** Drops `probability` (0–1) of the packets on each of `node`'s links. */
  loss(node: ClusterNode, probability: number): Fault;
  /** Packets the faults in place now have dropped (a healed fault's count goes with it). */
  dropped(): number;
  /** Heals every fault still in place and removes our rules; later faults are refused. */
  close(): void;
}

export function clusterNetwork(nodes: readonly ClusterNode[]): ClusterNetwork {
  const unavailable = firewallUnavailable() ?? (nodes.some((node) => !node.user) ? 'the nodes run as one user (not started as root)' : undefined);
  let firewall: Firewall | undefined;
  let closed = false;
  const make = (describe: string, rules: () => string[][]): Fault => {
    if (unavailable || closed) return { made: false, describe, why: unavailable ?? 'the network faults were closed' };
    firewall ??= openFirewall();
    return { made: true, describe, heal: firewall.add(rules()) };
  };
  return {
    unavailable,
    partition(side, rest = nodes.filter((node) => !side.includes(node))) {
      const describe = `partition ${names(side)} | ${names(rest)}`;
      return make(describe, () => side.flatMap((a) => rest.flatMap((b) => [...sends(a, b, ['-j', 'DROP']), ...sends(b, a, ['-j', 'DROP'])])));
    },
    loss(node, probability) {
      const describe = `loss ${Math.round(probability * 100)}% on ${node.name}`;
      const drop = ['-m', 'statistic', '--mode', 'random', '--probability', String(probability), '-j', 'DROP'];
      const peers = nodes.filter((peer) => peer !== node);
      return make(describe, () => [
        [...tcp(), ...owner(node), '-m', 'multiport', '--sports', ports(node), ...drop],
        ...peers.flatMap((peer) => sends(node, peer, drop)),
        [...tcp(), '-d', node.host, '-m', 'multiport', '--dports', ports(node), ...drop],
      ]);
    },
    dropped: () => firewall?.dropped() ?? 0,
    close() {
      closed = true;
      firewall?.close();
    },
  };
}

/** What `from`'s user sends to `to`'s address and ports. */
function sends(from: ClusterNode, to: ClusterNode, target: string[]): string[][] {
  return [[...tcp(), ...owner(from), '-d', to.host, '-m', 'multiport', '--dports', ports(to), ...target]];
}

const tcp = () => ['-p', 'tcp'];
const owner = (node: ClusterNode) => ['-m', 'owner', '--uid-owner', String(node.user!.uid)];
const ports = (node: ClusterNode) => `${node.httpPort},${node.transportPort}`;
const names = (nodes: readonly ClusterNode[]) => nodes.map((node) => node.name).join(',');
