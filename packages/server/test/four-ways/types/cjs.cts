// Every public entry of both packages, required from CommonJS, in a strict program that checks their declarations.
import server = require('@tokenbell/server');
import testing = require('@tokenbell/server/testing');
import vitest = require('@tokenbell/server/vitest');
import playwright = require('@tokenbell/server/playwright');
import jestSetup = require('@tokenbell/server/jest');
import jestTeardown = require('@tokenbell/server/jest/teardown');
import sdk = require('@tokenbell/sdk');
import sdkTestHelpers = require('@tokenbell/sdk/test-helpers');

const options: testing.StartTokenbellOptions = { seed: 'tokenbell.seed.json' };
export const entries = [server.createApp, testing.startTokenbell, vitest.tokenbellGlobalSetup(options), playwright.test, jestSetup, jestSetup.teardown, jestTeardown, sdk.createTokenbellClient, sdkTestHelpers.createTokenbellTestHelpers] as const;
export type Helpers = testing.TestHelpers;
