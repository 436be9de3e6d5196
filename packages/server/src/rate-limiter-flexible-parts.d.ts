// The one part of rate-limiter-flexible a start needs (the memory backing keeps its own counts, store/file/throttle.ts),
// imported alone: its index loads every backend it has (some thirty modules: Redis, Mongo, DynamoDB, ...), and only
// PostgreSQL's is wanted, and only with a database. Typed by the package's own declarations.
declare module 'rate-limiter-flexible/lib/RateLimiterRes.js' {
  import { RateLimiterRes } from 'rate-limiter-flexible';
  export = RateLimiterRes;
}
