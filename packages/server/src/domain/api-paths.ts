// The API answers under /api/v4 as under /api/v3 (the service's clients call v4), so every comparison of API paths
// (routing, the test kit's faults and request journal) first brings a path to its v3 spelling, here.
const v4Prefix = /^\/api\/v4(?=[/?]|$)/i;

/** `/api/v4/...` as `/api/v3/...`, in any case; other URLs unchanged. */
export function apiV3Url(url: string): string {
  return url.replace(v4Prefix, '/api/v3');
}
