import { describe, expect, it } from 'vitest';
import { redirectUriMatches, redirectUriWarnings } from '../../../src/domain/oauth/redirect-uris.js';

describe('redirectUriMatches', () => {
  it.each([
    ['https://app.example.com/cb', 'https://app.example.com/cb'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:53124/callback'],
    ['http://127.0.0.1:8080/callback', 'http://127.0.0.1:9090/callback'],
    ['http://127.0.0.1:8080/callback', 'http://127.0.0.1/callback'],
    ['http://[::1]/cb?x=1', 'http://[::1]:61000/cb?x=1'],
    ['http://127.0.0.1', 'http://127.0.0.1:4000'],
    // An empty path is `/`, as Doorkeeper compares URIs: git-credential-oauth's redirect has no path.
    ['http://127.0.0.1/', 'http://127.0.0.1:43117'],
    ['http://127.0.0.1', 'http://127.0.0.1:43117/'],
    ['http://127.0.0.1/?a=1', 'http://127.0.0.1:43117?a=1'],
  ])('%s matches %s', (registered, requested) => {
    expect(redirectUriMatches(registered, requested)).toBe(true);
  });

  it.each([
    ['https://app.example.com/cb', 'https://app.example.com/cb/'],
    ['https://app.example.com/cb', 'https://app.example.com:8443/cb'],
    ['https://app.example.com/cb', 'https://APP.example.com/cb'],
    ['http://localhost/callback', 'http://localhost:5555/callback'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:5555/other'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:5555/callback?x=1'],
    ['http://127.0.0.1/callback', 'https://127.0.0.1:5555/callback'],
    ['http://127.0.0.1/callback', 'http://[::1]:5555/callback'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1.evil.example:5555/callback'],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:5555/../callback'],
    ['https://127.0.0.1/callback', 'https://127.0.0.1:5555/callback'],
  ])('%s does not match %s', (registered, requested) => {
    expect(redirectUriMatches(registered, requested)).toBe(false);
  });
});

describe('redirectUriWarnings', () => {
  it('warns about plain http to another machine only', () => {
    const warnings = redirectUriWarnings(['http://app.example.com/cb', 'https://app.example.com/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost:3000/cb', 'com.example.app:/cb']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^http:\/\/app\.example\.com\/cb uses plain http .*RFC 6749 section 3\.1\.2\.1/);
  });
});
