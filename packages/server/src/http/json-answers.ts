// JSON answers with `Content-Type: application/json` exactly, as the service sends them. Express's res.json always
// appends `; charset=utf-8` (and res.set adds it back to any text-like type), which the media type does not define
// (JSON is UTF-8, RFC 8259 section 8.1) and which older python-gitlab, comparing the header literally, rejects.
//
// No ETag on a `Cache-Control: no-store` JSON answer (the API's and the OAuth endpoints'): nothing may keep it, so
// nothing can revalidate it, and hashing each body was CPU spent for no one. Every other answer keeps Express's.
import type { Express, Response } from 'express';

export function answerJsonExactly(app: Express): void {
  // The bodies of no-store answers, as res.send hands them to the ETag function (which sees only the body).
  const unstored = new WeakSet<Buffer>();
  const expressEtag = app.get('etag fn') as ((body: Buffer, encoding?: BufferEncoding) => string | undefined) | undefined;
  if (expressEtag) app.set('etag', (body: Buffer, encoding?: BufferEncoding) => (unstored.has(body) ? undefined : expressEtag(body, encoding)));
  app.response.json = function json(this: Response, body: unknown) {
    const type = this.get('Content-Type');
    if (type === undefined || /^application\/json\s*(;|$)/i.test(type)) this.setHeader('Content-Type', 'application/json');
    // A Buffer, so that res.send keeps the type as set instead of adding a charset to it.
    const chunk = Buffer.from(JSON.stringify(body) ?? 'null');
    if (this.getHeader('Cache-Control') !== 'no-store') return this.send(chunk);
    // What res.send would do with this answer, done here: it has no ETag to make (see above) and none to compare, so
    // only a conditional request, a HEAD or a 204 or 304 takes res.send's other steps, which remain its own.
    const { headers, method } = this.req;
    if (method === 'HEAD' || this.statusCode === 204 || this.statusCode === 304 || headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) {
      unstored.add(chunk);
      return this.send(chunk);
    }
    this.setHeader('Content-Length', chunk.length);
    this.end(chunk);
    return this;
  };
}
