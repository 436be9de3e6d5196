/** A request as the fake fetch saw it, with the body already read. */
export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

type Reply = Response | Error | ((request: Request) => Response);

/** A `fetch` answering the given replies in order (the last one repeats) and recording each request. */
export function fakeFetch(...replies: Reply[]) {
  const calls: Recorded[] = [];
  let next = 0;
  const fetch = async (request: Request): Promise<Response> => {
    calls.push({
      method: request.method,
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
    });
    const reply = replies[Math.min(next++, replies.length - 1)];
    if (reply instanceof Error) throw reply;
    if (typeof reply === 'function') return reply(request);
    if (!reply) throw new Error('fakeFetch: no reply configured');
    // Cloned so that a repeated reply still has an unread body.
    return reply.clone();
  };
  return { fetch, calls };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}
