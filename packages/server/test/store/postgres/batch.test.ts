// The batching of PostgreSQL lookups and writes (store/postgres/batch.ts), with the statement played by a function
// that records what it was asked: who shares a batch, what each caller gets back, and what a failure takes down.
import { describe, expect, it } from 'vitest';
import { batched, batchedWrites } from '../../../src/store/postgres/batch.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('batched lookups', () => {
  function recorder() {
    const calls: string[][] = [];
    const find = batched<{ key: string }, { key: string; value: string }>(async (asks) => {
      calls.push(asks.map((ask) => ask.key));
      return asks.filter((ask) => !ask.key.startsWith('missing')).map((ask) => ({ key: ask.key, value: `row ${ask.key}` }));
    });
    return { calls, find };
  }

  it('asks once for what is asked in one turn, once per key, and answers each caller its own row', async () => {
    const { calls, find } = recorder();
    const answers = await Promise.all(['a', 'b', 'a', 'missing', 'c'].map((key) => find({ key })));
    expect(calls).toEqual([['a', 'b', 'missing', 'c']]);
    expect(answers.map((row) => row?.value)).toEqual(['row a', 'row b', 'row a', undefined, 'row c']);
  });

  it('asks again for what is asked in a later turn, without waiting for a batch to fill', async () => {
    const { calls, find } = recorder();
    const first = find({ key: 'a' });
    await turn();
    const second = find({ key: 'b' });
    expect(await Promise.all([first, second])).toEqual([{ key: 'a', value: 'row a' }, { key: 'b', value: 'row b' }]);
    expect(calls).toEqual([['a'], ['b']]);
  });

  it('rejects every caller of a batch whose statement fails, and only them', async () => {
    let fail = true;
    const find = batched<{ key: string }, { key: string }>(async (asks) => {
      if (fail) throw new Error('connection lost');
      return asks;
    });
    const failed = await Promise.allSettled([find({ key: 'a' }), find({ key: 'b' })]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await find({ key: 'a' })).toEqual({ key: 'a' });
  });
});

describe('batched writes', () => {
  function recorder(refused = new Set<string>()) {
    const calls: string[][] = [];
    const write = batchedWrites<{ key: string; value: number }, { key: string; value: number }>(async (asks) => {
      calls.push(asks.map((ask) => `${ask.key}=${ask.value}`));
      // A statement with a refused row writes nothing at all, as a failed statement does.
      if (asks.some((ask) => refused.has(ask.key))) throw Object.assign(new Error('refused'), { code: '23503' });
      return asks.map((ask) => ({ ...ask }));
    });
    return { calls, write };
  }

  it('sends the writes of one turn together, and a second write of a key in the next batch, after the first', async () => {
    const { calls, write } = recorder();
    const answers = await Promise.all([write({ key: 'a', value: 1 }), write({ key: 'b', value: 1 }), write({ key: 'a', value: 2 }), write({ key: 'a', value: 3 })]);
    expect(calls).toEqual([['a=1', 'b=1'], ['a=2'], ['a=3']]);
    expect(answers.map((row) => `${row.key}=${row.value}`)).toEqual(['a=1', 'b=1', 'a=2', 'a=3']);
  });

  it('sends a failed batch again one write at a time, so that only the refused write fails', async () => {
    const { calls, write } = recorder(new Set(['bad']));
    const results = await Promise.allSettled([write({ key: 'a', value: 1 }), write({ key: 'bad', value: 1 }), write({ key: 'c', value: 1 })]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    expect(calls).toEqual([['a=1', 'bad=1', 'c=1'], ['a=1'], ['bad=1'], ['c=1']]);
  });

  it('rejects a write the statement answered no row for, instead of leaving its request waiting', async () => {
    const write = batchedWrites<{ key: string }, { key: string }>(async () => []);
    await expect(write({ key: 'a' })).rejects.toThrow('the write of a answered no row');
  });
});
