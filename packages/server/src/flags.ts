// The one way every command reads its arguments: node:util's parseArgs, strict, so that a misspelt or unknown flag
// stops the command (its ERR_PARSE_ARGS error is explained by cli/output.ts) instead of being ignored.
import { parseArgs } from 'node:util';
import { ConfigError } from './explained-error.js';

/** A flag with a value, a switch, or a flag with a value that may be given more than once. */
export type FlagKind = 'string' | 'boolean' | 'strings';

// Distributes over a union, so a table built at run time (config.ts's settings) still types as string | boolean.
type ValueOf<K extends FlagKind> = K extends 'boolean' ? boolean : K extends 'strings' ? string[] : string;
export type FlagValues<F extends Record<string, FlagKind>> = { [K in keyof F]?: ValueOf<F[K]> };

/**
 * parseArgs reads `--token-ttl -5` as a flag without its value and then a flag `-5`, and says so in its words; -5 is
 * the value, a wrong one, which the setting's own check names in the ordinary way. So it goes as `--token-ttl=-5`.
 */
function withNegativeValues(args: string[], flags: Record<string, FlagKind>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [arg, next] = [args[i]!, args[i + 1]];
    if (arg === '--') return [...joined, ...args.slice(i)];
    const kind = arg.startsWith('--') && Object.hasOwn(flags, arg.slice(2)) ? flags[arg.slice(2)] : undefined;
    if (kind !== undefined && kind !== 'boolean' && next !== undefined && /^-\d/.test(next)) joined.push(`${arg}=${args[++i]}`);
    else joined.push(arg);
  }
  return joined;
}

/** The values of `flags` in `args`; a flag `help` is also `-h`, since every command's usage promises both. */
export function parseFlags<const F extends Record<string, FlagKind>>(args: string[], flags: F, { positionals = false } = {}): { values: FlagValues<F>; positionals: string[] } {
  const options = Object.fromEntries(
    Object.entries(flags).map(([flag, kind]) => [flag, { type: kind === 'boolean' ? 'boolean' : 'string', ...(kind === 'strings' ? { multiple: true } : {}), ...(flag === 'help' ? { short: 'h' } : {}) }]),
  );
  const parsed = parseArgs({ args: withNegativeValues(args, flags), options: options as Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>, allowPositionals: positionals, strict: true });
  return { values: parsed.values as FlagValues<F>, positionals: parsed.positionals };
}

/** A reader of flags that `command` cannot do without: the flag's value, or a ConfigError naming it. */
export function required<F extends Record<string, unknown>>(values: F, command: string): (flag: keyof F & string) => string {
  return (flag) => {
    const value = values[flag];
    if (typeof value !== 'string') throw new ConfigError(`${command} needs --${flag}`);
    return value;
  };
}

/**
 * The subcommand and its arguments, for a command made of several (`users create`, `events emit`); undefined once
 * the command's usage is printed, for no subcommand or --help.
 */
export function subcommand<C extends string>(args: string[], name: string, commands: readonly C[], usage: string, print: (line: string) => void): { command: C; rest: string[] } | undefined {
  const [command, ...rest] = args;
  // `users create --help` asks for the usage too, rather than for a user without flags.
  if (command === undefined || [command, ...rest].some((arg) => arg === '--help' || arg === '-h')) {
    print(usage);
    return undefined;
  }
  if (!(commands as readonly string[]).includes(command)) throw new ConfigError(`unknown ${name} command "${command}"\n\n${usage}`);
  return { command: command as C, rest };
}
