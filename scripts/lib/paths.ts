import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The example seed, whose accounts and applications the document's examples describe. */
export const exampleSeedPath = fileURLToPath(new URL('../../packages/server/fixtures/example-seed.json', import.meta.url));
export const openapiPath = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
/**
 * The types generated from the document, in one place: the SDK publishes them, and the server imports them from
 * `@tokenbell/sdk` to type its handlers and records. Types only, so a declaration file: the server's build maps
 * `@tokenbell/sdk` onto it (tsconfig.build.json) without building the SDK first or compiling SDK sources.
 */
export const generatedTypesPath = fileURLToPath(new URL('../../packages/sdk/src/generated/openapi.d.ts', import.meta.url));
