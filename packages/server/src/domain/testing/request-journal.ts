// The request journal of the test-helper area (the document's listRecordedRequests): the last requests the instance
// received, for an app's tests to assert on. Entries arrive already stripped of every secret (http/request-journal.ts
// builds them); this keeps the newest `capacity` of them and answers queries on them.
import type { components } from '@tokenbell/sdk';
// The one rule for which API paths are the same (/api/v4 is answered as /api/v3) lives with the areas; it is a pure
// string function, so the domain may use it without knowing anything of HTTP.
import { apiV3Url } from '../api-paths.js';

export type RecordedRequest = components['schemas']['RecordedRequest'];

export interface JournalQuery {
  method?: string;
  /** `/api/v4/...` and `/api/v3/...` alike; otherwise compared exactly. */
  path?: string;
  client_id?: string;
  username?: string;
  /** At most this many entries; 100 when not given. */
  per_page?: number;
}

const defaultCapacity = 1000;
const defaultPerPage = 100;

export class RequestJournal {
  // A ring: recording is O(1) on every request, and the oldest entry is overwritten once the ring is full.
  readonly #entries: Array<RecordedRequest | undefined>;
  /** Where the next entry goes. */
  #next = 0;
  #count = 0;

  constructor(readonly capacity: number = defaultCapacity) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    this.#entries = new Array<RecordedRequest | undefined>(capacity);
  }

  record(entry: RecordedRequest): void {
    this.#entries[this.#next] = entry;
    this.#next = (this.#next + 1) % this.capacity;
    this.#count = Math.min(this.#count + 1, this.capacity);
  }

  /** Newest first, every criterion given holding; copies, so a caller cannot change what was recorded. */
  list(query: JournalQuery = {}): RecordedRequest[] {
    const limit = query.per_page ?? defaultPerPage;
    const path = query.path === undefined ? undefined : apiV3Url(query.path);
    const found: RecordedRequest[] = [];
    for (let i = 1; i <= this.#count && found.length < limit; i++) {
      const entry = this.#entries[(this.#next - i + this.capacity) % this.capacity]!;
      if (query.method !== undefined && entry.method !== query.method) continue;
      if (path !== undefined && apiV3Url(entry.path) !== path) continue;
      if (query.client_id !== undefined && entry.client_id !== query.client_id) continue;
      if (query.username !== undefined && entry.username !== query.username) continue;
      found.push({ ...entry });
    }
    return found;
  }

  clear(): void {
    this.#entries.fill(undefined);
    this.#next = 0;
    this.#count = 0;
  }
}
