// Jest in CommonJS: its global setup starts tokenbell once for the run, seeded from tokenbell.seed.json, and puts
// TOKENBELL_URL and TOKENBELL_TEST_HELPERS_TOKEN in the environment the test files run with; the teardown stops it. The suite is
// TypeScript compiled by tsc (jest/tsconfig.json) into jest/out, and plain JavaScript (jest/plain, the guide's
// example), so Jest itself needs no transformer.
module.exports = {
  testMatch: ['<rootDir>/jest/out/**/*.test.cjs', '<rootDir>/jest/plain/**/*.test.js'],
  globalSetup: '@tokenbell/server/jest',
  globalTeardown: '@tokenbell/server/jest/teardown',
};
