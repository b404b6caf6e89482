// A binary min-heap over an order given as `before(a, b)`. The planner keeps its rankings in these,
// so a tick reads only the wallets it takes (and those it passes over), never the whole fleet.

export class MinHeap<T> {
  private items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    let i = items.push(item) - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      const parent = items[up] as T;
      if (!this.before(item, parent)) break;
      items[i] = parent;
      i = up;
    }
    items[i] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) this.sinkFrom(0, last);
    return top;
  }

  /** Keeps only the items `keep` accepts, in one pass (dropping entries left behind by updates). */
  retain(keep: (item: T) => boolean): void {
    this.items = this.items.filter(keep);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.sinkFrom(i, this.items[i] as T);
  }

  clear(): void {
    this.items = [];
  }

  private sinkFrom(start: number, item: T): void {
    const items = this.items;
    const n = items.length;
    let i = start;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.before(items[right] as T, items[child] as T)) child = right;
      const c = items[child] as T;
      if (!this.before(c, item)) break;
      items[i] = c;
      i = child;
    }
    items[i] = item;
  }
}
