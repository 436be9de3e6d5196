// The server package's version, for --version and the metrics' build info.
import { createRequire } from 'node:module';

// package.json sits one level above both src/version.ts and dist/version.js.
export const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
