// What the lean-start test runs under the modules probe: the test kit's way to a first token, as a suite's first
// test takes it (startTokenbell on the example seed, then kit.signIn), and nothing else.
import { startTokenbell } from '../../src/testing.js';
import { exampleAccounts, exampleApplication } from '../support/example-seed.js';

const kit = await startTokenbell({ seed: process.argv[2]! });
const tokens = await kit.signIn({ username: exampleAccounts.jsmith.username, clientId: exampleApplication.clientId, clientSecret: exampleApplication.clientSecret });
if (!tokens.access_token) throw new Error('the kit signed in without an access token');
await kit.close();
