// A TCP relay between a harness and the API server that the runner can cut,
// as a dropped network would (docs/worker-protocol.md §8: a partitioned
// worker). While cut, bytes are swallowed in both directions and new
// connections are accepted and left hanging: requests neither fail nor
// answer, as under an iptables DROP. Healing closes every connection the cut
// touched (a client then sees an error and connects again) and relays anew.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface Partition {
  readonly port: number;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function relay(host: string, port: number): Promise<Partition> {
  let cut = false;
  const touched = new Set<Socket>();
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    if (cut) {
      touched.add(client);
      client.on('data', () => undefined); // swallowed
      return;
    }
    const upstream = connect({ host, port });
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const pipe = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (cut) {
          touched.add(client);
          touched.add(upstream);
        } else to.write(chunk);
      });
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the relay has no port');
  return {
    port: address.port,
    cut() {
      cut = true;
      // A connection idle at the cut is dropped too, whatever it carries next.
      for (const socket of open) touched.add(socket);
    },
    heal() {
      cut = false;
      for (const socket of touched) socket.destroy();
      touched.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
