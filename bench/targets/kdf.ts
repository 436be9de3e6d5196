// The password grant's floor: the server's own password check (verifyPassword: scrypt with the parameters stored in
// the hash, N=2^14, r=8, p=1) against the bench users' shared hash, CONCURRENCY checks in flight for SECONDS, on the
// same core and libuv thread pool size as a server. Prints `{"rate": checks per second}`.
// `node kdf.mjs CONCURRENCY SECONDS` (compiled by lib/servers.ts)
import { hashPassword, verifyPassword } from '../../packages/server/src/domain/passwords.js';

const [concurrency, seconds] = process.argv.slice(2).map(Number) as [number, number];
const password = 'bench-password-0';
const hash = await hashPassword(password);
let done = 0;
const started = performance.now();
const until = started + seconds * 1000;
async function worker(): Promise<void> {
  while (performance.now() < until) {
    if (!(await verifyPassword(password, hash))) throw new Error('the bench password did not verify');
    done++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
process.stdout.write(`${JSON.stringify({ rate: done / ((performance.now() - started) / 1000) })}\n`);
