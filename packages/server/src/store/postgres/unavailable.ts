// Which failures of the database mean "not reachable now" rather than "this request is wrong", and the guard that
// turns them, wherever a port or the throttle's backing meets them, into the domain's StoreUnavailableError.
import { StoreUnavailableError, type Counts, type Storage, type ThrottleBacking } from '../../domain/storage/index.js';

/** The socket's failures: refused, reset, timed out, or no route to the database's host. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL's own: a connection exception (class 08), the server shutting down, crashed or still starting (57P01-03),
 * too many connections (53300), a statement cancelled by statement_timeout (57014: nothing else here cancels one),
 * and a standby or read-only database refusing a write (25006), which readiness reports the same way.
 */
const serverCodes = /^(08...|57P0[123]|53300|57014|25006)$/;

/** node-postgres's and pg-pool's own errors carry no code, only these messages. */
const driverMessages = /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed)/;

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (socketCodes.has(code) || serverCodes.test(code))) return true;
  return driverMessages.test(error.message);
}

/** `error` as StoreUnavailableError when it says the database cannot be reached; otherwise unchanged. */
export function unavailableOr(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  return new StoreUnavailableError(`the database cannot be reached: ${(error as Error).message}`, { cause: error });
}

type Method = (...args: unknown[]) => unknown;

/** `method` called on `self`, its failure (thrown or rejected) passed through unavailableOr. */
function guarded(method: Method, self: unknown): Method {
  return (...args) => {
    try {
      const result = method.apply(self, args);
      return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(unavailableOr(error))) : result;
    } catch (error) {
      throw unavailableOr(error);
    }
  };
}

/** A port (a plain object of functions, as every store module makes) with each function guarded. */
function guardPort<T extends object>(port: T): T {
  return Object.fromEntries(Object.entries(port).map(([name, value]) => [name, typeof value === 'function' ? guarded(value as Method, port) : value])) as T;
}

/** The storage with every port guarded: the domain and the HTTP layer never see a driver's error for an outage. */
export function guardStorage(storage: Storage): Storage {
  return Object.fromEntries(Object.entries(storage).map(([name, port]) => [name, guardPort(port as object)])) as unknown as Storage;
}

/** The limiter's calls that reach the database; its refusals (RateLimiterRes) are no Error and pass unchanged. */
const limiterCalls = ['consume', 'penalty', 'reward', 'get', 'set', 'block', 'delete'] as const;

export function guardThrottleBacking(backing: ThrottleBacking): ThrottleBacking {
  return {
    ...backing,
    limiter: (options) => {
      const limiter = backing.limiter(options) as Counts & Partial<Record<(typeof limiterCalls)[number], Method>>;
      // Set on the limiter itself, which calls some of these on itself (a reward is a negative penalty).
      for (const name of limiterCalls) if (limiter[name]) Object.assign(limiter, { [name]: guarded(limiter[name], limiter) });
      return limiter;
    },
    addresses: guardPort(backing.addresses),
  };
}
