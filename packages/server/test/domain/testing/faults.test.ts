// The fault queue (domain/testing/faults.ts): the oldest fault matching every criterion given answers a request,
// `times` times, then is gone.
import { describe, expect, it } from 'vitest';
import { FaultQueue, type RequestFacts } from '../../../src/domain/testing/faults.js';

const now = () => 1_800_000_000;
const facts = (fields: Partial<RequestFacts> = {}): RequestFacts => ({ method: 'GET', path: '/api/v3/user', grantType: undefined, clientId: undefined, ...fields });

describe('FaultQueue', () => {
  it('queues a fault with an id, one use by default, and the instance’s time; lists copies, oldest first', () => {
    const faults = new FaultQueue(now);
    expect(faults.size).toBe(0);
    const first = faults.add({ match: { path: '/api/v4/user' }, answer: { status: 500 } });
    const second = faults.add({ match: {}, answer: { delay_ms: 10 }, times: 3 });
    expect(first).toEqual({ id: expect.any(String), match: { path: '/api/v3/user' }, answer: { status: 500 }, remaining: 1, created_at: '2027-01-15T08:00:00.000Z' });
    expect(second.remaining).toBe(3);
    expect(first.id).not.toBe(second.id);
    expect(faults.size).toBe(2);
    const listed = faults.list();
    expect(listed.map((f) => f.id)).toEqual([first.id, second.id]);
    listed[0]!.remaining = 99;
    (listed[0]!.match as { path?: string }).path = '/elsewhere';
    expect(faults.list()[0]).toEqual(first);
  });

  it('matches on each criterion: method, path (/api/v4 as /api/v3), grant type and client', () => {
    const cases: Array<[Parameters<FaultQueue['add']>[0]['match'], RequestFacts, RequestFacts]> = [
      [{ method: 'POST' }, facts({ method: 'POST' }), facts({ method: 'GET' })],
      [{ path: '/api/v4/user' }, facts({ path: '/api/v3/user' }), facts({ path: '/api/v3/user/emails' })],
      [{ path: '/api/v3/user' }, facts({ path: '/api/v3/user' }), facts({ path: '/oauth/token' })],
      [{ path: '/oauth/token' }, facts({ path: '/oauth/token' }), facts({ path: '/oauth/revoke' })],
      [{ grant_type: 'refresh_token' }, facts({ grantType: 'refresh_token' }), facts({ grantType: 'password' })],
      [{ grant_type: 'refresh_token' }, facts({ grantType: 'refresh_token' }), facts({})],
      [{ client_id: 'app-a' }, facts({ clientId: 'app-a' }), facts({ clientId: 'app-b' })],
      [{ client_id: 'app-a' }, facts({ clientId: 'app-a' }), facts({})],
      [{ method: 'POST', path: '/oauth/token', grant_type: 'password', client_id: 'app-a' },
        facts({ method: 'POST', path: '/oauth/token', grantType: 'password', clientId: 'app-a' }),
        facts({ method: 'POST', path: '/oauth/token', grantType: 'password', clientId: 'app-b' })],
    ];
    for (const [match, matching, other] of cases) {
      const faults = new FaultQueue(now);
      const queued = faults.add({ match, answer: { status: 503 } });
      expect(faults.take(other), JSON.stringify([match, other])).toBeUndefined();
      expect(faults.take(matching)?.id, JSON.stringify([match, matching])).toBe(queued.id);
    }
  });

  it('an empty match takes the next request', () => {
    const faults = new FaultQueue(now);
    const queued = faults.add({ match: {}, answer: { status: 500 } });
    expect(faults.take(facts({ method: 'DELETE', path: '/anything' }))?.id).toBe(queued.id);
  });

  it('uses the oldest matching fault first, each once unless `times` says more, then drops it', () => {
    const faults = new FaultQueue(now);
    const other = faults.add({ match: { path: '/oauth/token' }, answer: { status: 400 } });
    const older = faults.add({ match: { path: '/api/v3/user' }, answer: { status: 500 } });
    const newer = faults.add({ match: {}, answer: { status: 502 }, times: 3 });
    expect(faults.take(facts())).toEqual({ ...older, remaining: 1 });
    expect(faults.take(facts())?.id).toBe(newer.id);
    expect(faults.list().map((f) => [f.id, f.remaining])).toEqual([[other.id, 1], [newer.id, 2]]);
    expect(faults.take(facts())?.id).toBe(newer.id);
    expect(faults.take(facts())?.id).toBe(newer.id);
    expect(faults.take(facts())).toBeUndefined();
    expect(faults.list().map((f) => f.id)).toEqual([other.id]);
  });

  it('needs the body only while some fault matches on what a body carries', () => {
    const faults = new FaultQueue(now);
    faults.add({ match: { method: 'POST', path: '/oauth/token' }, answer: { status: 500 } });
    expect(faults.needsBody()).toBe(false);
    faults.add({ match: { grant_type: 'password' }, answer: { status: 500 } });
    expect(faults.needsBody()).toBe(true);
    faults.take(facts({ grantType: 'password' }));
    expect(faults.needsBody()).toBe(false);
    faults.add({ match: { client_id: 'app-a' }, answer: { status: 500 } });
    expect(faults.needsBody()).toBe(true);
  });

  it('forgets everything on clear', () => {
    const faults = new FaultQueue(now);
    faults.add({ match: {}, answer: { status: 500 }, times: 5 });
    faults.clear();
    expect(faults.size).toBe(0);
    expect(faults.take(facts())).toBeUndefined();
  });
});
