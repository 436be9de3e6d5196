// The server package's version, for --version and the metrics' build info.
import { readFileSync } from 'node:fs';
import { packageFile } from './package-files.js';

export const { version } = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };
