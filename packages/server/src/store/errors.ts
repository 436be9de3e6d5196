// What can go wrong opening or writing the file store, each an operator's problem named with its fix.
import { ExplainedError } from '../explained-error.js';

export class StoreLockedError extends ExplainedError {
  override name = 'StoreLockedError';
}
export class StoreCorruptError extends ExplainedError {
  override name = 'StoreCorruptError';
}
export class StoreVersionError extends ExplainedError {
  override name = 'StoreVersionError';
}
export class StoreClosedError extends ExplainedError {
  override name = 'StoreClosedError';
}
/** The data file's directory or lock file cannot be created or written: an operator's mistake, named with its fix. */
export class StoreAccessError extends ExplainedError {
  override name = 'StoreAccessError';
}
export const accessProblem = (error: unknown) => `${(error as NodeJS.ErrnoException).code ?? 'error'}: ${(error as Error).message}`;
