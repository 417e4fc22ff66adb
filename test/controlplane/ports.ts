// Free ports, for components started on this machine (on loopback unless a
// host is given: 0.0.0.0 for what pods on the real node must reach).
//
// Chosen below the kernel's ephemeral range (net.ipv4.ip_local_port_range):
// a port handed out now is bound only later by the component, and meanwhile
// any outgoing connection on the machine may take an ephemeral port as its
// local port. A long-lived one (a watch on the API server) then holds it, and
// a component that retries its bind (kube-proxy's healthz does, every 5 s)
// never becomes healthy. Ports outside that range are never autobound.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * Where candidates are drawn from: above the well-known defaults of the
 * components themselves (10250 kubelet, 10256 kube-proxy, …) and below
 * Kubernetes' NodePort range (30000–32767), itself below the usual ephemeral range.
 */
const LOWEST = 20_000;
const HIGHEST = 29_999;

/** Where the ephemeral range starts, and the reserved ports, from /proc (Linux's defaults elsewhere). */
function kernelPortSettings(): { ephemeralLow: number; reserved: (port: number) => boolean } {
  const read = (path: string): string | undefined => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const low = Number((read('/proc/sys/net/ipv4/ip_local_port_range') ?? '32768').split(/\s+/)[0]);
  return { ephemeralLow: Number.isFinite(low) ? low : 32768, reserved: reservedPorts(read('/proc/sys/net/ipv4/ip_local_reserved_ports') ?? '') };
}

/** ip_local_reserved_ports' "8080,30000-30010" as a predicate. */
export function reservedPorts(list: string): (port: number) => boolean {
  const ranges = list
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => part.split('-').map(Number) as [number, number?])
    .map(([from, to]) => [from, to ?? from] as const);
  return (port) => ranges.some(([from, to]) => port >= from && port <= to);
}

/**
 * Candidate ports: outside the ephemeral range (`[low, high]`; only `low`
 * bounds them) and the reserved ports, in random order (so concurrent callers
 * rarely try the same ones). Empty when the range leaves no room below it.
 */
export function candidatePorts([low]: readonly [number, number?], reserved: (port: number) => boolean): number[] {
  const pool: number[] = [];
  for (let port = LOWEST; port <= Math.min(HIGHEST, low - 1); port++) if (!reserved(port)) pool.push(port);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool;
}

const listen = (port: number, host: string): Promise<Server | undefined> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error)));
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });

/** `count` distinct free ports on `host`, held open together so none is handed out twice. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const { ephemeralLow, reserved } = kernelPortSettings();
  const held: Server[] = [];
  try {
    for (const port of candidatePorts([ephemeralLow], reserved)) {
      if (held.length === count) break;
      const server = await listen(port, host);
      if (server) held.push(server);
    }
    // No room below the ephemeral range (an unusual ip_local_port_range): let the kernel choose.
    while (held.length < count) {
      const server = await listen(0, host);
      if (server) held.push(server);
    }
    return held.map((server) => {
      const address = server.address();
      if (!address || typeof address === 'string') throw new Error('no port');
      return address.port;
    });
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export const freePort = async (host = '127.0.0.1'): Promise<number> => (await freePorts(1, host))[0]!;
