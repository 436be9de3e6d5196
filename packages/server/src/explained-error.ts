// Errors whose message is written for the person who caused them: it names the file, flag or field and what to do.
// The CLI prints such a message as one line; anything else that reaches it is a bug and keeps its stack.

export class ExplainedError extends Error {
  override name = 'ExplainedError';
}

/**
 * Input the domain refuses (a seed entry, a form, a future API body): `field` names it, `code` tells a program
 * what kind of problem it is, `message` tells a person.
 * - `invalid`: the value itself is wrong (format, length, missing);
 * - `taken`: the value is fine but another record already has it (username, e-mail, token, App ID, path);
 * - `unknown`: it refers to something that does not exist.
 */
export class InputError extends ExplainedError {
  override name = 'InputError';
  constructor(
    readonly field: string,
    message: string,
    readonly code: 'invalid' | 'taken' | 'unknown' = 'invalid',
  ) {
    super(message);
  }
}

/** A flag, an environment variable or a command line that cannot work as given. */
export class ConfigError extends ExplainedError {}
