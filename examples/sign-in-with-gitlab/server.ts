// Runs the example by hand against any GitLab (or `npm start`'s tokenbell): register an application whose redirect
// URI is http://127.0.0.1:8080/callback with scope read_user, then
//   GITLAB_URL=http://127.0.0.1:3000 CLIENT_ID=... CLIENT_SECRET=... npx tsx examples/sign-in-with-gitlab/server.ts
// and open http://127.0.0.1:8080/.
import { createApp } from './app.js';

const need = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; see the comment at the top of examples/sign-in-with-gitlab/server.ts`);
  return value;
};

const port = Number(process.env.PORT ?? 8080);
const app = createApp({
  gitlabUrl: need('GITLAB_URL'),
  clientId: need('CLIENT_ID'),
  clientSecret: need('CLIENT_SECRET'),
  redirectUri: process.env.REDIRECT_URI ?? `http://127.0.0.1:${port}/callback`,
});
app.listen(port, '127.0.0.1', () => console.log(`example app on http://127.0.0.1:${port}/`));
