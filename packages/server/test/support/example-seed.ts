// The plain secrets of fixtures/example-seed.json, which the store keeps only as hashes and digests: the one list
// the server's tests and the contract suite both sign in with.

export const exampleAccounts = {
  jsmith: { username: 'jsmith', password: 'correct-horse-battery', pat: 'tbpat-jsmith-example-token-000000000000000000' },
  awong: {
    username: 'awong',
    password: 'two-factor-makes-passwords-useless',
    pat: 'tbpat-awong-example-token-0000000000000000000',
    otp_secret: 'KRUGKIDROVUWG2ZAMJZG653OEBTG66BA',
  },
  mallory: { username: 'mallory', password: 'not-a-member-of-anything' },
} as const;

export const exampleApplication = {
  clientId: 'example-client-id-0000000000000000',
  clientSecret: 'tbcs_example-client-secret-000000000000000000',
  redirectUri: 'http://127.0.0.1:8080/callback',
} as const;

/** The example seed's OpenID Connect application, with the scopes an app configured for gitlab.com asks for. */
export const exampleOidcApplication = {
  clientId: 'example-oidc-client-id-000000000000',
  clientSecret: 'tbcs_example-oidc-client-secret-0000000000000',
  redirectUri: 'http://127.0.0.1:8080/oidc/callback',
} as const;
