// The simulated clock: a queue of timed actions, run in (time, insertion) order.
// Nothing in the simulator reads the real clock.

interface Entry {
  at: number;
  seq: number;
  run: () => void;
  /** Settles promises: after it, pending promise reactions run before the next entry. */
  settles: boolean;
}

export class Timeline {
  private heap: Entry[] = [];
  private seq = 0;
  now = 0;

  schedule(at: number, run: () => void, settles = false): void {
    const e: Entry = { at: Math.max(at, this.now), seq: this.seq++, run, settles };
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  after(delayMs: number, run: () => void, settles = false): void {
    this.schedule(this.now + delayMs, run, settles);
  }

  get size(): number {
    return this.heap.length;
  }

  peekAt(): number | undefined {
    return this.heap[0]?.at;
  }

  pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    if (!top) return undefined;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    this.now = top.at;
    return top;
  }
}

const before = (a: Entry, b: Entry): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);
