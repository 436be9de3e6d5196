// JSON answers with `Content-Type: application/json` exactly, as the service sends them. Express's res.json always
// appends `; charset=utf-8` (and res.set adds it back to any text-like type), which the media type does not define
// (JSON is UTF-8, RFC 8259 section 8.1) and which older python-gitlab, comparing the header literally, rejects.
import type { Express, Response } from 'express';

export function answerJsonExactly(app: Express): void {
  app.response.json = function json(this: Response, body: unknown) {
    const type = this.get('Content-Type');
    if (type === undefined || /^application\/json\s*(;|$)/i.test(type)) this.setHeader('Content-Type', 'application/json');
    // A Buffer, so that res.send keeps the type as set instead of adding a charset to it.
    return this.send(Buffer.from(JSON.stringify(body) ?? 'null'));
  };
}
