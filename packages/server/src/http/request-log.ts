// The request log: pino's, one JSON line per request, with an id that is also sent back, and nothing secret in it.
// Apart from the metrics (operations.ts) because only a server the CLI runs logs requests: the test kit's instances
// never load pino.
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { pino, stdTimeFunctions, type Logger, type LoggerOptions } from 'pino';
import type { LogFormat } from '../config.js';
import { routeOf } from './dispatch.js';

/** Query parameters whose values are secrets: never logged. */
const secretParams = /^(access_token|private_token|code|state|refresh_token|client_secret|password|token)$/i;

/** The path and query as logged: every value of a secret parameter replaced. */
export function loggedUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const query = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const name = decodeURIComponentSafe(pair.split('=')[0] ?? '');
      return secretParams.test(name) ? `${pair.split('=')[0]}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, question)}?${query}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const requestIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

export interface RequestLogOptions {
  level: string;
  /** pino's JSON, JSON with level names and ISO times (for shippers that read those), or readable lines (pino-pretty). */
  format: LogFormat;
  /** Where JSON lines go; standard output when absent. */
  destination?: NodeJS.WritableStream;
}

/** What the request log keeps on each answer until its line is written. */
const loggedRequest = Symbol('logged request');
type LoggedResponse = Response & { [loggedRequest]?: { id: string; method: string; url: string; started: number } };

/** The request log's middleware, and its logger for the server's other lines. */
export type RequestLog = RequestHandler & { logger: Logger };

/**
 * One line per request: id, method, path (secret query values redacted), route, status and duration. No headers
 * and no bodies are logged, so cookies, Authorization, PRIVATE-TOKEN, passwords and codes cannot appear.
 *
 * Each line is built once, when the answer is sent, as one object for pino: pino-http made two or three child
 * loggers per request to carry the request and the route into it (13% of an API read's CPU, with its garbage).
 * On standard output pino writes asynchronously: lines written while a write is under way go out together in the
 * next one, instead of one system call per request, and whatever is pending is flushed when the process exits.
 */
export function requestLogger({ level, format, destination }: RequestLogOptions): RequestLog {
  const options: LoggerOptions = {
    level,
    serializers: {
      err: (raw: Error) => ({ type: raw.name, message: raw.message }),
    },
    ...(format === 'json-iso' ? { formatters: { level: (label: string) => ({ level: label }) }, timestamp: stdTimeFunctions.isoTime } : {}),
  };
  const logger =
    format === 'pretty'
      ? pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, ignore: 'pid,hostname' } } })
      : // minLength 1 writes every line as soon as it comes, as 0 does, but makes flush(cb) wait until what was written
        // has reached standard output (with 0 it calls back at once): the last line before an exit is not lost.
        pino(options, destination ?? pino.destination({ dest: 1, sync: false, minLength: 1 }));
  // Whether an answer below 400 is logged: at --log-level warn and above it is not, and its line is never built.
  const logsCompleted = logger.isLevelEnabled('info');
  function answered(this: LoggedResponse) {
    const res = this;
    const status = res.headersSent ? res.statusCode : null;
    const unavailable = res.locals.storeUnavailable as Error | undefined;
    const notReady = res.locals.notReady as string | undefined;
    if (status !== null && status < 400 && unavailable === undefined && notReady === undefined && !logsCompleted) return;
    const { id, method, url, started } = res[loggedRequest]!;
    const line = {
      req: { id, method, url: loggedUrl(url) },
      route: routeOf(res.req),
      res: { statusCode: status },
      responseTime: Date.now() - started,
    };
    // A client that goes away before the answer is not the server's failure.
    if (status === null) logger.warn(line, 'request aborted');
    // Not the server's fault but its store's, and alike for every request while it lasts: a warning, without a stack.
    else if (unavailable !== undefined) logger.warn({ ...line, err: unavailable }, 'store unavailable');
    else if (notReady !== undefined) logger.warn({ ...line, problem: notReady }, 'not ready');
    else if (status >= 500) logger.error({ ...line, err: new Error(`failed with status code ${status}`) }, 'request errored');
    else logger[status >= 400 ? 'warn' : 'info'](line, 'request completed');
  }
  const middleware: RequestHandler = (req, res, next) => {
    // A sane X-Request-Id from a proxy in front is kept, so one id follows the request through both logs.
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    // As the client sent them: the API's v4 alias rewrites req.url on the way, and a HEAD is answered as a GET.
    (res as LoggedResponse)[loggedRequest] = { id, method: req.method, url: req.url, started: Date.now() };
    // 'close' comes once for every answer, after 'finish' or when the client went away first; one listener shared by
    // every request rather than a closure each.
    res.on('close', answered);
    next();
  };
  return Object.assign(middleware, { logger });
}
