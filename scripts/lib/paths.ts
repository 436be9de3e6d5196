import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const openapiPath = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
export const generatedTypesPath = fileURLToPath(
  new URL('../../packages/sdk/src/generated/openapi.ts', import.meta.url),
);
