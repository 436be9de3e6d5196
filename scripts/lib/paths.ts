import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const openapiPath = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
/** Both packages get the same generated types: the SDK publishes them, the server types its handlers with them. */
export const generatedTypesPaths = [
  fileURLToPath(new URL('../../packages/sdk/src/generated/openapi.ts', import.meta.url)),
  fileURLToPath(new URL('../../packages/server/src/generated/openapi.ts', import.meta.url)),
];
