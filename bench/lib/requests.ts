// The requests the sections send: the API's read and write paths, the write's body and the ways to authenticate.
import { project } from './store.js';

export const readPath = '/api/v3/notification_settings';
export const writePath = `/api/v3/projects/${project.id}/notification_settings`;
// Level custom with events: the write path that does the most (level, twelve flags, the record's events).
export const writeBody = JSON.stringify({ level: 'custom', new_note: true, new_issue: true, close_issue: false, new_merge_request: true, merge_merge_request: false });

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const pat = (token: string) => ({ 'private-token': token });
export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

/** A durable PUT of `writeBody`, each request with the next token `next` gives. */
export function writeRequest(next: () => string) {
  return [
    {
      method: 'PUT',
      path: writePath,
      headers: { 'content-type': 'application/json' },
      body: writeBody,
      setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...bearer(next()) } }),
    },
  ];
}

/** A form POST to `path`, its body built per request (so single-use values are each sent once). */
export function formPost(path: string, body: () => Record<string, string>, headers: Record<string, string> = {}) {
  return [
    {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      setupRequest: (req: object) => ({ ...req, body: new URLSearchParams(body()).toString() }),
    },
  ];
}
