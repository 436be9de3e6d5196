// `tokenbell test-helpers <operation> [JSON] ...`: any operation of the document's `test_helpers` tag from a shell,
// against a running instance started with --test-helpers, as an administrator's personal access token. The
// operations, their methods, paths, parameters and summaries are read from the document, so a new one there is a new
// one here; `tokenbell events` is a friendlier face on two of them and calls them through `callTestHelper`.
import { ConfigError, ExplainedError } from '../explained-error.js';
import { parseFlags } from '../flags.js';
import { type DocumentParameter, findTestHelperOperation, type TestHelperOperation, testHelperOperations } from '../openapi/test-helper-operations.js';
import type { Print } from './output.js';
import { readAll, readSecret } from './secrets.js';

export { findTestHelperOperation, type TestHelperOperation, testHelperOperations };

/** The instance did not answer, or answered with an error. */
export class RemoteError extends ExplainedError {}

const column = Math.max(...testHelperOperations.map((op) => op.command.length)) + 2;

export const testHelpersUsage = `Usage: tokenbell test-helpers <operation> [JSON | -] --url URL [--token-file FILE] [--path-param NAME=VALUE] [--query NAME=VALUE ...]

Calls one operation of the test-helper area (/api/v3/test_helpers) of an instance started with --test-helpers, with
JSON as the request body (- reads it from standard input, for a body holding a password), and prints the answer as
JSON (nothing when there is none). tokenbell test-helpers <operation> --help shows an operation's parameters and an
example body.

Operations (as the SDK names them; camelCase and the operationId work too):
${testHelperOperations.map((op) => `  ${op.command.padEnd(column)}${op.summary}`).join('\n')}

${[
  ['--url URL', 'the instance (TOKENBELL_URL, default http://127.0.0.1:3000)'],
  ['--token-file FILE', "a file holding an administrator's personal access token (- for standard input), else TOKENBELL_TEST_HELPERS_TOKEN; tokenbell users token makes one"],
  ['--token TOKEN', 'the token on the command line, where other users of the machine can read it (warned against)'],
  ['--path-param NAME=VALUE', 'a parameter of the operation\'s path, e.g. id=acme/widgets (URL-encoded here)'],
  ['--query NAME=VALUE', 'a query parameter, repeatable'],
]
  .map(([flag, text]) => `  ${flag!.padEnd(column)}${text}`)
  .join('\n')}
`;

function operationUsage(op: TestHelperOperation): string {
  const describe = (p: DocumentParameter) => `  ${p.name.padEnd(14)}${p.description ?? ''}${p.required ? ' (required)' : ''}`;
  return [
    `Usage: tokenbell test-helpers ${op.command}${op.body ? (op.body.required ? ' JSON' : ' [JSON]') : ''}${op.pathParams.map((p) => ` --path-param ${p.name}=VALUE`).join('')}${op.queryParams.length ? ' [--query NAME=VALUE ...]' : ''}`,
    '',
    op.summary,
    `${op.method} ${op.path} (operationId ${op.operationId})`,
    ...(op.pathParams.length ? ['', 'Path parameters (--path-param NAME=VALUE, the value as is: the command URL-encodes it):', ...op.pathParams.map(describe)] : []),
    ...(op.queryParams.length ? ['', 'Query parameters (--query):', ...op.queryParams.map(describe)] : []),
    ...(op.body?.example !== undefined ? ['', 'Example body:', `  ${JSON.stringify(op.body.example)}`] : []),
    '',
  ].join('\n');
}

export interface TestHelperRemote {
  /** The instance's base URL, without a trailing slash. */
  url: string;
  token: string;
}

/** The instance and token from --url, --token-file (or --token) or the environment, as every command against the area takes them. */
export async function testHelperRemote(flags: { url?: string; token?: string; 'token-file'?: string }, env: NodeJS.ProcessEnv, command: string): Promise<TestHelperRemote> {
  const token = await readSecret({
    label: 'token',
    command,
    commandLine: { flag: '--token', value: flags.token },
    file: { flag: '--token-file', value: flags['token-file'] },
    variable: 'TOKENBELL_TEST_HELPERS_TOKEN',
    env,
    input: process.stdin,
    // Run from shell loops and test scripts: never waits on standard input unless told to (--token-file -).
    inputByDefault: false,
  });
  if (!token) throw new ConfigError(`${command} needs --token-file FILE (or TOKENBELL_TEST_HELPERS_TOKEN): an administrator's personal access token`);
  return { url: (flags.url ?? env.TOKENBELL_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, ''), token };
}

export interface TestHelperRequest {
  path?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

/** Calls `operationId` on the instance; its JSON answer, or undefined for one without a body (204). */
export async function callTestHelper<T = unknown>(remote: TestHelperRemote, operationId: string, request: TestHelperRequest = {}): Promise<T> {
  const op = testHelperOperations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`the document has no test_helpers operation ${operationId}`);
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = request.path?.[name];
    if (value === undefined) throw new ConfigError(`${op.command} needs --path-param ${name}=VALUE${describeParameter(op.pathParams.find((p) => p.name === name))}`);
    return encodeURIComponent(value);
  });
  const query = new URLSearchParams(request.query);
  const { body } = request;
  let response: Response;
  try {
    response = await fetch(`${remote.url}${path}${query.size ? `?${query}` : ''}`, {
      method: op.method,
      headers: { 'PRIVATE-TOKEN': remote.token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new RemoteError(`cannot reach ${remote.url} (--url): ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) throw new RemoteError(`${remote.url}: ${op.method} ${path}: ${serverMessage(text)}${hint(response.status, serverMessage(text))}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

function describeParameter(p: DocumentParameter | undefined): string {
  return p?.description ? ` (${p.description.replace(/\.$/, '')})` : '';
}

function serverMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error_description?: unknown; error?: unknown };
    const message = parsed.message ?? parsed.error_description ?? parsed.error;
    return typeof message === 'string' ? message : JSON.stringify(message ?? parsed);
  } catch {
    return text.trim() || '(no body)';
  }
}

/** What to change, for the answers that point at the command line rather than at the request. */
function hint(status: number, message: string): string {
  // With the area off every path in it is the API's plain 404; a missing project or user is named in its message.
  if (status === 404 && message === '404 Not Found') return ' (is the server running with --test-helpers?)';
  if (status === 401) return ' (--token: an administrator\'s personal access token; tokenbell users token makes one)';
  if (status === 403) return ' (--token: the token must be an administrator\'s, with scope api)';
  return '';
}

/** `name=value` pairs of a repeatable flag. */
function pairs(flag: string, values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of values ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(`--${flag} ${JSON.stringify(pair)}: write NAME=VALUE`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function checkNames(op: TestHelperOperation, flag: string, given: Record<string, string>, known: DocumentParameter[]): void {
  for (const name of Object.keys(given)) {
    if (!known.some((p) => p.name === name)) {
      throw new ConfigError(`--${flag} ${name}: ${op.command} has ${known.length ? `only ${known.map((p) => p.name).join(', ')}` : `no ${flag === 'query' ? 'query' : 'path'} parameters`}`);
    }
  }
}

export async function runTestHelpersCommand(args: string[], env: NodeJS.ProcessEnv, print: Print): Promise<void> {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h') return void print(testHelpersUsage);
  const op = findTestHelperOperation(name);
  if (!op) throw new ConfigError(`test-helpers: unknown operation "${name}"; one of ${testHelperOperations.map((o) => o.command).join(', ')} (tokenbell test-helpers --help)`);
  const { values, positionals } = parseFlags(rest, { url: 'string', token: 'string', 'token-file': 'string', 'path-param': 'strings', query: 'strings', help: 'boolean' }, { positionals: true });
  if (values.help) return void print(operationUsage(op));
  const path = pairs('path-param', values['path-param']);
  const query = pairs('query', values.query);
  checkNames(op, 'path-param', path, op.pathParams);
  checkNames(op, 'query', query, op.queryParams);
  if (positionals.length > 1) throw new ConfigError(`test-helpers ${op.command}: one JSON argument at most (quote it: '{"seconds": 60}')`);
  if (positionals[0] === '-' && values['token-file'] === '-') throw new ConfigError(`test-helpers ${op.command}: standard input holds the JSON body or the token, not both`);
  const json = positionals[0] === '-' ? await readAll(process.stdin) : positionals[0];
  let body: unknown;
  if (json !== undefined) {
    if (!op.body) throw new ConfigError(`test-helpers ${op.command} takes no JSON body; leave out ${JSON.stringify(json)}`);
    try {
      body = JSON.parse(json);
    } catch (error) {
      throw new ConfigError(`test-helpers ${op.command}: the JSON argument is not JSON (${(error as Error).message}); quote it for the shell, e.g. '${JSON.stringify(op.body.example ?? {})}'`);
    }
  } else if (op.body?.required) {
    throw new ConfigError(`test-helpers ${op.command} needs a JSON body, e.g. '${JSON.stringify(op.body.example ?? {})}'`);
  }
  const remote = await testHelperRemote(values, env, `test-helpers ${op.command}`);
  const answer = await callTestHelper(remote, op.operationId, { path, query, body });
  // The area's answers hold tokens (mint-*) made for a test: say so rather than end as if they had been shown.
  if (answer !== undefined && (await print(JSON.stringify(answer, null, 2))) === false) {
    throw new ExplainedError(`test-helpers ${op.command}: the answer could not be printed (standard output is closed)`);
  }
}
