// The claims OpenID Connect releases (domain/oidc/claims.ts): what `openid` releases, what `email` adds, the groups of
// the id_token and of userinfo, and sub_legacy.
import { describe, expect, it } from 'vitest';
import { idTokenUserClaims, legacySubject, userInfoClaims } from '../../../src/domain/oidc/claims.js';
import { StoreBuilder } from '../fixtures.js';

const settings = { issuer: 'https://tokenbell.example', instanceSecret: 'the instance secret' };

function world() {
  const builder = new StoreBuilder();
  const jane = builder.user('jane', { name: 'Jane Doe', email: 'jane@example.com' });
  const [zeta, acme, ops, guests] = ['zeta', 'acme', 'ops', 'guests'].map((path) => builder.group(path));
  builder.member(zeta!, jane, 50).member(acme!, jane, 40).member(ops!, jane, 30).member(guests!, jane, 10);
  // A project's membership adds no group.
  builder.member(builder.project('tool', 'private', null, 'jane'), jane, 50);
  return { storage: builder.storage(), jane };
}

describe('claims', () => {
  it('releases the identity with openid, the address only with email, and the direct groups in the id_token', async () => {
    const { storage, jane } = world();
    const plain = await idTokenUserClaims(storage, jane, ['openid', 'profile'], settings);
    expect(plain).toEqual({
      sub: String(jane.id),
      sub_legacy: legacySubject(jane.id, settings.instanceSecret),
      name: 'Jane Doe',
      nickname: 'jane',
      preferred_username: 'jane',
      profile: 'https://tokenbell.example/jane',
      groups_direct: ['zeta', 'acme', 'ops', 'guests'],
    });
    expect(await idTokenUserClaims(storage, jane, ['openid', 'email'], settings)).toMatchObject({ email: 'jane@example.com', email_verified: true });
  });

  it('answers userinfo every group and, per role, the groups held at exactly that role; none when empty', async () => {
    const { storage, jane } = world();
    const info = await userInfoClaims(storage, jane, ['openid'], settings);
    expect(info).toMatchObject({
      groups: ['zeta', 'acme', 'ops', 'guests'],
      'https://gitlab.org/claims/groups/owner': ['zeta'],
      'https://gitlab.org/claims/groups/maintainer': ['acme'],
      'https://gitlab.org/claims/groups/developer': ['ops'],
    });
    expect(info).not.toHaveProperty('groups_direct');
    expect(info).not.toHaveProperty('email');
    const loner = new StoreBuilder();
    const bob = loner.user('bob');
    const alone = await userInfoClaims(loner.storage(), bob, ['openid'], settings);
    expect(alone.groups).toEqual([]);
    expect(Object.keys(alone).filter((k) => k.startsWith('https://'))).toEqual([]);
  });

  it('makes sub_legacy 64 hex digits, stable per user and secret, different across either', () => {
    const a = legacySubject(1, 'secret');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(legacySubject(1, 'secret')).toBe(a);
    expect(legacySubject(2, 'secret')).not.toBe(a);
    expect(legacySubject(1, 'other')).not.toBe(a);
  });
});
