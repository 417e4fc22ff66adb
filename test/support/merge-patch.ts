// A JSON merge patch of one string map, as the API server applies it: a key set to null is removed,
// a key not mentioned is left alone. Shared by the test doubles of the API (memory-kube.ts, test/sim/api.ts).
export function mergeStrings(into: Readonly<Record<string, string>>, change: Readonly<Record<string, string | null>> | undefined): Record<string, string> {
  const out = { ...into };
  for (const [k, v] of Object.entries(change ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
