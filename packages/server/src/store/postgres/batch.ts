// What arrives in the same turn of the event loop goes to the database together (the DataLoader pattern): under load
// a round trip costs the server more than the rows it brings, so ten requests that each need their token found ask
// for ten tokens in one statement, and ten settings changes commit together. Nothing waits for a batch to fill: the
// statement goes out at the end of the turn in which its first ask came, which under no load is at once, and a batch
// in flight never delays the next. Each batch is one statement, as each ask was before, so what an ask sees or writes
// is unchanged: a lookup sees whatever was committed before it was asked.

/** One ask, a lookup or a write: `key` names what it is about, the same key for the same row. */
export interface Ask {
  key: string;
}

/**
 * `find(ask)` answers the row of `findAll(asks)` whose `key` is `ask.key` (undefined when there is none); asks of one
 * key in a batch are asked once and get the same row, so callers build their own records from it.
 */
export function batched<A extends Ask, R extends Ask>(findAll: (asks: A[]) => Promise<R[]>): (ask: A) => Promise<R | undefined> {
  type Batch = Map<string, { ask: A; waiting: Array<{ resolve(row: R | undefined): void; reject(error: unknown): void }> }>;
  let pending: Batch | null = null;
  async function flush(batch: Batch): Promise<void> {
    try {
      const rows = new Map((await findAll([...batch.values()].map((entry) => entry.ask))).map((row) => [row.key, row]));
      for (const [key, { waiting }] of batch) for (const w of waiting) w.resolve(rows.get(key));
    } catch (error) {
      for (const { waiting } of batch.values()) for (const w of waiting) w.reject(error);
    }
  }
  return (ask) =>
    new Promise<R | undefined>((resolve, reject) => {
      let batch = pending;
      if (batch === null) {
        const started: Batch = (batch = pending = new Map());
        setImmediate(() => {
          pending = null;
          void flush(started);
        });
      }
      const entry = batch.get(ask.key);
      if (entry) entry.waiting.push({ resolve, reject });
      else batch.set(ask.key, { ask, waiting: [{ resolve, reject }] });
    });
}

/**
 * Writes that arrive in the same turn share one statement, and so one commit and one flush of the write-ahead log, as
 * the file store's commits share one fsync. `writeAll` applies every ask in one statement and answers a row per ask,
 * keyed alike. Asks of one key never share a batch: the second goes in the next batch, sent once the one before has
 * committed, so the writes of one key from one turn apply in the order they came. `writeAll` must write its rows in
 * the order of their keys, so that batches in flight at once (from this instance or another) lock them in the same
 * order and never deadlock. A batch that fails is sent again one ask at a time: a failed statement wrote nothing, and
 * one refused ask must fail only its own request.
 */
export function batchedWrites<A extends Ask, R extends Ask>(writeAll: (asks: A[]) => Promise<R[]>): (ask: A) => Promise<R> {
  type Entry = { ask: A; resolve(row: R): void; reject(error: unknown): void };
  let pending: Array<Map<string, Entry>> | null = null;
  const answer = (entries: Entry[], rows: R[]) => {
    const byKey = new Map(rows.map((row) => [row.key, row]));
    for (const entry of entries) {
      const row = byKey.get(entry.ask.key);
      if (row) entry.resolve(row);
      else entry.reject(new Error(`the write of ${entry.ask.key} answered no row`));
    }
  };
  const send = async (entries: Entry[]) => {
    try {
      answer(entries, await writeAll(entries.map((entry) => entry.ask)));
    } catch (error) {
      if (entries.length === 1) return entries[0]!.reject(error);
      await Promise.all(entries.map((entry) => send([entry])));
    }
  };
  return (ask) =>
    new Promise<R>((resolve, reject) => {
      let batches = pending;
      if (batches === null) {
        const started: Array<Map<string, Entry>> = (batches = pending = []);
        setImmediate(async () => {
          pending = null;
          for (const batch of started) await send([...batch.values()]);
        });
      }
      let batch = batches.find((candidate) => !candidate.has(ask.key));
      if (batch === undefined) batches.push((batch = new Map()));
      batch.set(ask.key, { ask, resolve, reject });
    });
}
