// Every public entry of both packages, imported as an ES module, in a strict program that checks their declarations.
import { configFrom, createApp, openBackend, type Storage } from '@tokenbell/server';
import { startTokenbell, type RunningTokenbell, type SeedFixture, type StartTokenbellOptions, type TestHelpers } from '@tokenbell/server/testing';
import setup, { tokenbellGlobalSetup } from '@tokenbell/server/vitest';
import { expect, test, type TokenbellWorkerFixtures } from '@tokenbell/server/playwright';
import jestSetup from '@tokenbell/server/jest';
import jestTeardown from '@tokenbell/server/jest/teardown';
import { createTokenbellClient, passwordGrant } from '@tokenbell/sdk';
import { createTokenbellTestHelpers, type TokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';

const seed: SeedFixture = { users: [{ username: 'a', email: 'a@example.com', name: 'A', password: 'a long password' }] };
const options: StartTokenbellOptions = { seed, config: { tokenTtl: 60 } };
export const kit: [typeof startTokenbell, RunningTokenbell['helpers'] | undefined, TestHelpers extends TokenbellTestHelpers ? true : false] = [startTokenbell, undefined, true];
export const fixtures = [setup, tokenbellGlobalSetup(options), test, expect, jestSetup, jestTeardown] as const;
export type Worker = TokenbellWorkerFixtures['tokenbell'];
export const server = [configFrom, createApp, openBackend] as const;
export type Stored = Storage;
export const sdk = [createTokenbellClient, passwordGrant, createTokenbellTestHelpers] as const;
