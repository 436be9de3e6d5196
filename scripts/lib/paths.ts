import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const openapiPath = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
/**
 * The types generated from the document, in one place: the SDK publishes them, and the server imports them from
 * `@tokenbell/sdk` to type its handlers and records.
 */
export const generatedTypesPath = fileURLToPath(new URL('../../packages/sdk/src/generated/openapi.ts', import.meta.url));
