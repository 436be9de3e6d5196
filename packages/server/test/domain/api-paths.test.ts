import { describe, expect, it } from 'vitest';
import { apiV3Url } from '../../src/domain/api-paths.js';

describe('apiV3Url', () => {
  it('rewrites /api/v4 to /api/v3 in any case, and nothing else', () => {
    expect(apiV3Url('/API/V4/user?x=1')).toBe('/api/v3/user?x=1');
    expect(apiV3Url('/api/v4')).toBe('/api/v3');
    expect(apiV3Url('/api/v45/user')).toBe('/api/v45/user');
    expect(apiV3Url('/oauth/api/v4/user')).toBe('/oauth/api/v4/user');
  });
});
