// Stopping an HTTP server without failing the requests it is answering: a code exchange that committed must still
// send its answer, or the client has spent the code for nothing.
import type { Server, ServerResponse } from 'node:http';

/**
 * Follows a listening server's requests so that `stop` can let them finish. Node's `server.close()` already stops
 * accepting connections and closes the idle ones; what it leaves to us is the busy keep-alive connections, which it
 * would keep open until their keep-alive timeout, and the requests still running when the grace period ends.
 */
export class GracefulStop {
  readonly #server: Server;
  readonly #inFlight = new Set<ServerResponse>();
  #stopping = false;

  constructor(server: Server) {
    this.#server = server;
    // First, so that it runs before the application can answer.
    server.prependListener('request', (_req, res: ServerResponse) => {
      this.#inFlight.add(res);
      if (this.#stopping) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.#inFlight.delete(res);
        // An answer whose headers had gone out before the stop could not say `close`; its connection is idle now.
        if (this.#stopping) this.#server.closeIdleConnections();
      });
    });
  }

  /**
   * Refuses new connections, lets the requests in flight finish for `graceMs`, then cuts the connections still open.
   * Resolves with how many requests were cut.
   */
  async stop(graceMs: number): Promise<number> {
    this.#stopping = true;
    // The client is told it cannot send another request on this connection, rather than finding it closed under it.
    for (const res of this.#inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    let cut = 0;
    const force = setTimeout(() => {
      cut = this.#inFlight.size;
      this.#server.closeAllConnections();
    }, graceMs);
    await closed;
    clearTimeout(force);
    return cut;
  }
}
