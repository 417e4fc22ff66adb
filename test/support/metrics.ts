// Reads a counter from the functions' /metrics, summed over labels and hosts.
export async function scrapeTotal(ports: readonly number[], metric: string): Promise<number> {
  let total = 0;
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) if (line.startsWith(metric) && !line.startsWith('#')) total += Number(line.split(' ').pop());
  }
  return total;
}
