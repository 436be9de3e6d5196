// Runs a command module as `node` would and writes to stderr every module the process has loaded so far, at each
// SIGUSR2 and as it exits: ES modules as the loader resolved them (told by a resolve hook, which runs off the main
// thread and posts each URL here) and CommonJS ones from require's cache. A test asks a server before and after a
// request, to see what the request made it load, or reads what a command loaded once it has exited.
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;
const { port1, port2 } = new MessageChannel();
const esModules = new Set();
port1.on('message', (url) => esModules.add(url));
port1.unref();
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });

const require = createRequire(import.meta.url);
const report = () => {
  const loaded = [...esModules].filter((url) => url.startsWith('file:')).map((url) => new URL(url).pathname);
  process.stderr.write(`\nloaded modules: ${JSON.stringify([...new Set([...loaded, ...Object.keys(require.cache)])])}\n`);
};
process.on('SIGUSR2', report);
process.on('exit', report);
const [, , entry, ...args] = process.argv;
process.argv = [process.argv[0], entry, ...args];
await import(entry);
