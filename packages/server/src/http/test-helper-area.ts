// What an instance with test helpers on adds to every request: the request journal (first, so that it sees every
// answer), queued faults, and the area's routes. One module, loaded at the first request of an instance that has a
// kit (app.ts), so that a server without test helpers never loads the area.
import { Router, type RequestHandler } from 'express';
import type { TestHelperOptions } from '../domain/testing/helpers.js';
import { faultInjection } from './faults.js';
import { requestJournal } from './request-journal.js';
import { testHelperRouter } from './test-helper-routes.js';

export interface TestHelperArea {
  journal: RequestHandler;
  faults: RequestHandler;
  routes: RequestHandler;
}

export function testHelperArea(helpers: TestHelperOptions, now: () => number, bodies: RequestHandler): TestHelperArea {
  return {
    journal: requestJournal(helpers.kit.journal, now, helpers.storage),
    faults: faultInjection(helpers.kit.faults, bodies),
    routes: Router().use('/api/v3/test_helpers', testHelperRouter(helpers)),
  };
}
