import { startTokenbell } from '@tokenbell/server/testing';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    tokenbellUrl: string;
    tokenbellAdminToken: string;
  }
}

// vitest runs this once, in its main process, before any test file; the files run in worker processes, so they get
// what can cross to them, the URL and an administrator's token, and reach tokenbell over HTTP.
export default async function ({ provide }: TestProject) {
  const tokenbell = await startTokenbell({
    seed: {
      users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password' }],
      applications: [
        { name: 'My App', owner: 'alice', client_id: 'my-app', client_secret: 'my-app-secret-0123456789', redirect_uris: ['http://127.0.0.1:3000/callback'] },
      ],
    },
  });
  provide('tokenbellUrl', tokenbell.url);
  provide('tokenbellAdminToken', tokenbell.adminToken);
  return () => tokenbell.close(); // after the last file
}
