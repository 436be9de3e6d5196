// The parts of prom-client a server needs from its start, imported alone: its index loads the whole library, the
// Node.js runtime's collectors and with them @opentelemetry/api (some eighty modules), which only a scrape needs
// (operations.ts loads them then). Typed by the package's own declarations.
declare module 'prom-client/lib/counter.js' {
  import { Counter } from 'prom-client';
  export = Counter;
}

declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from 'prom-client';
  export = Gauge;
}

declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from 'prom-client';
  export = Histogram;
}

declare module 'prom-client/lib/registry.js' {
  import { Registry } from 'prom-client';
  export = Registry;
}

declare module 'prom-client/lib/defaultMetrics.js' {
  import { collectDefaultMetrics } from 'prom-client';
  export = collectDefaultMetrics;
}
