// The in-process helpers of startTokenbell and the SDK's client of the same operations over HTTP take and answer the
// same types, so a suite can move from one to the other without changing a line.
import { expectTypeOf, test } from 'vitest';
import type { testHelperOperations } from '@tokenbell/sdk';
import type { TokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';
import type { testHelpers } from '../src/domain/testing/helpers.js';

// The implementation's own type: the kit's public TestHelpers is the SDK's interface, which this keeps it to.
type TestHelpers = ReturnType<typeof testHelpers>;

test('the in-process helpers are the SDK client of the test-helper area', () => {
  expectTypeOf<TestHelpers>().toMatchTypeOf<TokenbellTestHelpers>();
});

test('the in-process helpers are named as the document names them (x-helper), every one of them', () => {
  expectTypeOf<keyof TestHelpers>().toEqualTypeOf<keyof testHelperOperations>();
});
