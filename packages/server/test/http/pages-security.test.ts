// The two small rules the pages' security rests on: which return_to is followed, and what the consent page's CSP
// allows the form's redirect to reach.
import { describe, expect, it } from 'vitest';
import { formActionSource } from '../../src/http/pages/authorize-routes.js';
import { localPath } from '../../src/http/pages/shared.js';

describe('localPath', () => {
  it.each(['/profile/applications', '/oauth/authorize?client_id=a&state=%2F%2Fx', '/'])('keeps the local path %j', (path) => {
    expect(localPath(path)).toBe(path);
  });

  it.each([
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    '/\t/evil.example',
    '/\n/evil.example',
    ' /profile',
    'profile',
    '',
    `/${'a'.repeat(4096)}`,
    42,
    undefined,
    ['/profile'],
  ])('ignores %j', (value) => {
    expect(localPath(value)).toBeUndefined();
  });
});

describe('formActionSource', () => {
  it.each([
    ['http://127.0.0.1:8080/callback?x=1', 'http://127.0.0.1:8080'],
    ['https://app.example.com/oauth/callback', 'https://app.example.com'],
    ['https://bücher.example/cb', 'https://xn--bcher-kva.example'],
    ['http://[::1]:3000/cb', 'http://[::1]:3000'],
    ['com.example.app:/oauth', 'com.example.app:'],
    // A host the URL parser accepts but a CSP source list cannot hold: only the scheme is allowed.
    ['https://a;script-src*.example/cb', 'https:'],
    ['https://a,b.example/cb', 'https:'],
  ])('%s -> %s', (uri, source) => {
    expect(formActionSource(uri)).toBe(source);
  });
});
