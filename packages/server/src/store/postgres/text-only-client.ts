// The connection every statement of the PostgreSQL store goes through (the pool makes its connections of this class),
// so no statement can carry what PostgreSQL refuses as text (rows.ts, isText) and fail with a 500: the lookups ask
// isText themselves and find nothing, as the file store would; a write of such text is refused here, before it is
// sent, as the store's ordinary refusal of a bad value (an InputError, answered 400).
import pg from 'pg';
import { refusal } from '../../domain/storage/refusals.js';
import { isText } from './rows.js';

const holdsNonText = (value: unknown): boolean => {
  if (typeof value === 'string') return !isText(value);
  if (Array.isArray(value)) return value.some(holdsNonText);
  // pg sends a plain object as JSON, which PostgreSQL's jsonb refuses with \u0000 in it too.
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value).some(holdsNonText);
  return false;
};

export class TextOnlyClient extends pg.Client {
  // pg's query has a dozen overloads (text or config, values, callback); this one checks the values and passes the rest on.
  override query(...args: unknown[]): never {
    const [config, values] = args;
    const params = Array.isArray(values) ? values : (config as { values?: unknown } | null)?.values;
    if (Array.isArray(params) && params.some(holdsNonText)) {
      const refused = refusal.text();
      const callback = args.find((arg): arg is (error: Error) => void => typeof arg === 'function');
      if (!callback) return Promise.reject(refused) as never;
      process.nextTick(callback, refused);
      return undefined as never;
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}
