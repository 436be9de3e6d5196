// `@tokenbell/server/jest/teardown`: the globalTeardown that stops the tokenbell `@tokenbell/server/jest` started.
import setup = require('./jest.cjs');

export = setup.teardown;
