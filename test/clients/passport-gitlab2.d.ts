// passport-gitlab2 ships no types; what the test uses of it.
declare module 'passport-gitlab2' {
  import type { Strategy as PassportStrategy } from 'passport';

  export interface GitLabProfile {
    id: string;
    username: string;
    displayName: string;
    emails: { value: string }[];
    profileUrl: string;
  }

  export class Strategy extends PassportStrategy {
    constructor(
      options: { clientID: string; clientSecret: string; callbackURL: string; baseURL: string; scope?: string | string[]; state?: boolean; pkce?: boolean },
      verify: (accessToken: string, refreshToken: string, profile: GitLabProfile, done: (error: unknown, user?: unknown) => void) => void,
    );
  }
}
