// The request validator (express-openapi-validator) configured for the document, and its warm-up before listening.
// The validator's route lookup is cached by validator-route-cache.ts, the one module that knows its internals.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { document, documentPath } from '../openapi/document.js';
import { withCachedRouteLookup } from './validator-route-cache.js';

export interface ValidationOptions {
  validateResponses: boolean;
}

/** The validator's middleware chain for the document, with the route lookup cached. */
export function openApiValidation({ validateResponses }: ValidationOptions): RequestHandler[] {
  const chain = OpenApiValidator.middleware({
    apiSpec: documentPath,
    validateApiSpec: false,
    // Unknown query parameters are ignored, as the service ignores them and RFC 6749 section 3.1 requires of the
    // authorization endpoint: clients send extra ones (python-gitlab sends `id` on settings GETs). Known ones are
    // still checked strictly.
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // The security schemes are enforced by apiAuthentication and the routes; the validator checks shapes only.
    validateSecurity: false,
    // The v4 alias rewrites req.url; the validator must see the rewritten path.
    useRequestUrl: true,
    // No operation takes multipart/form-data, so the multipart step would only pass every request on.
    fileUploader: false,
  }) as unknown as RequestHandler[];
  return withCachedRouteLookup(chain, document);
}

interface RequestBody {
  $ref?: string;
  content?: Record<string, unknown>;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** One request per documented operation and request content type (or none), in the document's own order. */
export function warmUpRequests(apiDoc: {
  paths?: Record<string, Record<string, unknown>>;
  components?: { requestBodies?: Record<string, RequestBody> };
}): { method: string; path: string; contentType?: string }[] {
  // Request bodies may be shared in components (a local $ref); nothing else is referred to here.
  const resolve = (body: RequestBody | undefined) => (body?.$ref ? apiDoc.components?.requestBodies?.[body.$ref.split('/').pop()!] : body);
  const requests: { method: string; path: string; contentType?: string }[] = [];
  for (const [template, item] of Object.entries(apiDoc.paths ?? {})) {
    const path = template.replace(/\{[^}]+\}/g, '0');
    for (const method of methods) {
      const operation = item[method] as { requestBody?: RequestBody } | undefined;
      if (!operation) continue;
      const types = Object.keys(resolve(operation.requestBody)?.content ?? {});
      if (types.length === 0) requests.push({ method: method.toUpperCase(), path });
      for (const contentType of types) requests.push({ method: method.toUpperCase(), path, contentType });
    }
  }
  return requests;
}

/**
 * The app's settings that decide how paths and queries are read, which the validator's route table and the warm-up
 * app must share with it. The query parser must be `extended`, as the document's deep-object parameters need.
 */
export const routingSettings = {
  'case sensitive routing': false,
  'strict routing': false,
  'query parser': 'extended',
} as const;

/**
 * Has the validator load the document and compile its checks for every operation now, before the server listens,
 * instead of on the first request to each (which paid about half a second for the first of all). The requests go
 * through the same chain over loopback in a bare app, without authentication, which on the real app answers
 * first; whether they pass validation does not matter, only that their validators were built.
 */
export async function warmUpValidation(chain: RequestHandler[]): Promise<void> {
  const app = express();
  for (const [setting, value] of Object.entries(routingSettings)) app.set(setting, value);
  const answer = (res: Response) => res.status(204).end();
  const answerError: ErrorRequestHandler = (_error, _req, res, _next) => answer(res);
  app.use(chain, (_req: Request, res: Response) => answer(res), answerError);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const { method, path, contentType } of warmUpRequests(document)) {
      await new Promise<void>((resolve, reject) => {
        const headers = contentType ? { 'content-type': contentType, 'content-length': '0' } : {};
        http
          .request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => response.resume().once('end', resolve))
          .once('error', reject)
          .end();
      });
    }
  } finally {
    agent.destroy();
    server.closeAllConnections();
    server.close();
  }
}
