// What the tests that hold one request validator to another share: an app that runs only a validator chain and shows
// what it did, and the paths they send to both.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import fc from 'fast-check';
import { document } from '../../src/openapi/document.js';

/** An app that runs only the given checks and shows what they attached to the request, or their refusal. */
export function probe(chain: RequestHandler | RequestHandler[]): express.Express {
  const app = express();
  app.set('query parser', 'extended');
  app.use(express.json(), express.urlencoded({ extended: true }));
  app.use(chain);
  app.use((req, res) => {
    const openapi = (req as { openapi?: Record<string, unknown> & { schema?: { operationId?: string } } }).openapi;
    res.json({
      route: openapi && { expressRoute: openapi.expressRoute, openApiRoute: openapi.openApiRoute, operation: openapi.schema?.operationId },
      pathParams: openapi?.pathParams,
      params: req.params,
      query: req.query,
      body: req.body,
    });
  });
  const errors: ErrorRequestHandler = (error: { status?: number; message?: string; errors?: unknown; headers?: unknown }, req, res, _next) => {
    const pathParams = (req as { openapi?: { pathParams?: unknown } }).openapi?.pathParams;
    res.status(error.status ?? 500).json({ message: error.message, errors: error.errors, headers: error.headers, pathParams, params: req.params, query: req.query });
  };
  app.use(errors);
  return app;
}

export interface Listening {
  url: string;
  close(): void;
}

/** The app on a free loopback port. */
export async function listen(app: express.Express): Promise<Listening> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const segment = fc.oneof(
  fc.constantFrom('1', '42', 'acme%2Fwidgets', 'acme', '%E0%A4%A', '%', '%zz', '%C3%A9t%C3%A9', '-1', '1.5', 'x'.repeat(300), ''),
  fc.stringMatching(/^[A-Za-z0-9%._~:@!$&'()*+,;=-]{0,12}$/),
);

/**
 * Mostly the document's paths, their parameters filled with anything, in their own or another case, maybe with a
 * slash or a segment more; some arbitrary paths.
 */
export const requestPath = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(...Object.keys(document.paths as Record<string, unknown>)), fc.array(segment, { minLength: 3, maxLength: 3 }), fc.boolean(), fc.constantFrom('', '', '/', '/extra'))
      .map(([template, values, upper, suffix]) => {
        let i = 0;
        const filled = template.replace(/\{[^}]+\}/g, () => values[i++]!) + suffix;
        return upper ? filled.toUpperCase() : filled;
      }),
  },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 0, maxLength: 5 }).map((parts) => `/${parts.join('/')}`) },
);
