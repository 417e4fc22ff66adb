// Free ports, for components started on this machine (on loopback unless a
// host is given: 0.0.0.0 for what pods on the real node must reach).
import { createServer, type Server } from 'node:net';

/** `count` distinct free ports on `host`, held open together so none is handed out twice. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.on('error', reject);
          server.listen(0, host, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export const freePort = async (host = '127.0.0.1'): Promise<number> => (await freePorts(1, host))[0]!;
