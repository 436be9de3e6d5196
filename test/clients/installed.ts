// The version of a client as installed, for the test names: which release was tested is part of the result.
import { readFileSync } from 'node:fs';

export function installedVersion(name: string): string {
  // Read from node_modules directly: not every package exports its package.json.
  const file = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
