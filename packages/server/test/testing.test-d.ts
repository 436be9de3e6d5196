// The in-process helpers of startTokenbell and the SDK's client of the same operations over HTTP take and answer the
// same types, so a suite can move from one to the other without changing a line.
import { expectTypeOf, test } from 'vitest';
import type { testHelperOperations } from '@tokenbell/sdk';
import type { TokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';
import type { testHelpers } from '../src/domain/testing/helpers.js';
import type { SeedFixture } from '../src/testing.js';

// The implementation's own type: the kit's public TestHelpers is the SDK's interface, which this keeps it to.
type TestHelpers = ReturnType<typeof testHelpers>;

test('the in-process helpers are the SDK client of the test-helper area', () => {
  expectTypeOf<TestHelpers>().toMatchTypeOf<TokenbellTestHelpers>();
});

test('the in-process helpers are named as the document names them (x-helper), every one of them', () => {
  expectTypeOf<keyof TestHelpers>().toEqualTypeOf<keyof testHelperOperations>();
});

type SeedUser = NonNullable<SeedFixture['users']>[number];

test("a seed's user gives a password or its hash: one of them, not both", () => {
  const user = { username: 'alice', email: 'alice@example.com', name: 'Alice' };
  expectTypeOf({ ...user, password: 'correct horse battery' }).toMatchTypeOf<SeedUser>();
  expectTypeOf({ ...user, password_hash: 'scrypt$1024$8$1$c2FsdA==$aGFzaA==' }).toMatchTypeOf<SeedUser>();
  expectTypeOf({ ...user, password: 'correct horse battery', password_hash: 'scrypt$1024$8$1$c2FsdA==$aGFzaA==' }).not.toMatchTypeOf<SeedUser>();
  expectTypeOf(user).not.toMatchTypeOf<SeedUser>();
});
