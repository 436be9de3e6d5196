// The in-process helpers of startTokenbell and the SDK's client of the same operations over HTTP take and answer the
// same types, so a suite can move from one to the other without changing a line.
import { expectTypeOf, test } from 'vitest';
import type { TokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';
import type { TestHelpers } from '../src/testing.js';

test('the in-process helpers are the SDK client of the test-helper area', () => {
  expectTypeOf<TestHelpers>().toMatchTypeOf<TokenbellTestHelpers>();
});
