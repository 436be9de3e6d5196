// The request journal (domain/testing/request-journal.ts): a ring of the last requests, newest first, filtered as
// listRecordedRequests says.
import { describe, expect, it } from 'vitest';
import { type RecordedRequest, RequestJournal } from '../../../src/domain/testing/request-journal.js';

const entry = (n: number, fields: Partial<RecordedRequest> = {}): RecordedRequest => ({
  at: new Date(1_800_000_000_000 + n * 1000).toISOString(),
  method: 'GET',
  path: `/api/v4/projects/${n}`,
  status: 200,
  duration_ms: 1.5,
  client_id: null,
  username: null,
  grant_type: null,
  fault: null,
  ...fields,
});

const paths = (entries: RecordedRequest[]) => entries.map((e) => e.path);

describe('RequestJournal', () => {
  it('keeps the last `capacity` entries, newest first, the oldest overwritten', () => {
    const journal = new RequestJournal(3);
    for (let n = 1; n <= 5; n++) journal.record(entry(n));
    expect(paths(journal.list())).toEqual(['/api/v4/projects/5', '/api/v4/projects/4', '/api/v4/projects/3']);
    journal.record(entry(6));
    expect(paths(journal.list())).toEqual(['/api/v4/projects/6', '/api/v4/projects/5', '/api/v4/projects/4']);
  });

  it('keeps 1,000 by default and answers 100 unless asked for more', () => {
    const journal = new RequestJournal();
    for (let n = 1; n <= 1200; n++) journal.record(entry(n));
    expect(journal.list()).toHaveLength(100);
    const all = journal.list({ per_page: 1000 });
    expect(all).toHaveLength(1000);
    expect(all[0]!.path).toBe('/api/v4/projects/1200');
    expect(all.at(-1)!.path).toBe('/api/v4/projects/201');
    expect(paths(journal.list({ per_page: 2 }))).toEqual(['/api/v4/projects/1200', '/api/v4/projects/1199']);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new RequestJournal(0)).toThrow(RangeError);
    expect(() => new RequestJournal(1.5)).toThrow(RangeError);
  });

  it('filters by method, client, user and path, every criterion given holding', () => {
    const journal = new RequestJournal();
    journal.record(entry(1, { method: 'POST', path: '/oauth/token', client_id: 'app-a', username: 'jane', grant_type: 'password' }));
    journal.record(entry(2, { path: '/api/v3/user', client_id: 'app-a', username: 'jane' }));
    journal.record(entry(3, { path: '/api/v4/user', client_id: 'app-b', username: 'joe' }));
    journal.record(entry(4, { method: 'POST', path: '/oauth/revoke', client_id: 'app-b' }));

    expect(paths(journal.list({ method: 'POST' }))).toEqual(['/oauth/revoke', '/oauth/token']);
    expect(paths(journal.list({ client_id: 'app-a' }))).toEqual(['/api/v3/user', '/oauth/token']);
    expect(paths(journal.list({ username: 'joe' }))).toEqual(['/api/v4/user']);
    expect(paths(journal.list({ method: 'GET', client_id: 'app-a' }))).toEqual(['/api/v3/user']);
    expect(journal.list({ method: 'post' })).toEqual([]);
    expect(journal.list({ username: 'JANE' })).toEqual([]);
  });

  it('takes /api/v4/... and /api/v3/... for the same path, on either side; other paths compare exactly', () => {
    const journal = new RequestJournal();
    journal.record(entry(1, { path: '/api/v3/user' }));
    journal.record(entry(2, { path: '/api/v4/user' }));
    journal.record(entry(3, { path: '/api/v4/user/emails' }));
    journal.record(entry(4, { path: '/oauth/token' }));
    expect(paths(journal.list({ path: '/api/v4/user' }))).toEqual(['/api/v4/user', '/api/v3/user']);
    expect(paths(journal.list({ path: '/api/v3/user' }))).toEqual(['/api/v4/user', '/api/v3/user']);
    expect(journal.list({ path: '/api/v3/use' })).toEqual([]);
    expect(journal.list({ path: '/OAUTH/TOKEN' })).toEqual([]);
  });

  it('answers copies, and forgets everything on clear', () => {
    const journal = new RequestJournal(2);
    journal.record(entry(1));
    journal.list()[0]!.status = 500;
    expect(journal.list()[0]!.status).toBe(200);
    journal.clear();
    expect(journal.list()).toEqual([]);
    journal.record(entry(2));
    expect(paths(journal.list())).toEqual(['/api/v4/projects/2']);
  });
});
