// What a user's authenticator app shows: the tests type it in where a person would.
import { totpFor } from '../../src/domain/two-factor.js';

/** The code for `secret` at `nowSeconds` (epoch seconds). */
export const currentCode = (secret: string, nowSeconds: number): string => totpFor(secret).generate({ timestamp: nowSeconds * 1000 });
