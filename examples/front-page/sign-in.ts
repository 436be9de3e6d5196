// Start the server first: `npm ci && npm start` prints the demo account's password once, on its first start.
// Then: DEMO_PASSWORD=<that password> npx tsx examples/front-page/sign-in.ts
import { createTokenbellClient, passwordGrant } from '@tokenbell/sdk';

const baseUrl = process.env.TOKENBELL_URL ?? 'http://127.0.0.1:3000';

// The password grant: the demo's username and password for an access token (and a refresh token).
const tokens = await passwordGrant({ baseUrl, username: 'demo', password: process.env.DEMO_PASSWORD! });
const client = createTokenbellClient({ baseUrl, auth: { accessToken: tokens.access_token } });

const me = await client.user.current();
console.log(`Signed in as ${me.username} (${me.email}); the token lasts ${tokens.expires_in} s`);

// Mail the demo user when a pipeline of the demo project fails.
const settings = await client.notificationSettings.project('demo-group/demo-project').update({ level: 'custom', failed_pipeline: true });
console.log('demo-group/demo-project:', settings);
