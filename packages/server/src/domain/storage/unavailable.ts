// The one failure every port may answer besides its own: the store cannot be reached just now. The HTTP layer answers
// it 503 with Retry-After in each area's format, so a caller knows to try again rather than that its request was wrong.

/**
 * The store did not answer (its database refused the connection, timed out or went away mid-statement). What the
 * request asked was not acknowledged; it may or may not have been done, as with any request whose answer was lost.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
