// The sign-in page.
import { html, layout } from './html.js';
import { csrfField, formError } from './frame.js';

export interface SignInView {
  csrf: string;
  /** A checked local path, or undefined. */
  returnTo?: string | undefined;
  login?: string | undefined;
  error?: string | undefined;
  /** The application whose authorization request the sign-in resumes, named so people know who is asking. */
  application?: string | undefined;
}

const asking = (application: string | undefined) =>
  application ? html`<p class="notice"><strong>${application}</strong> is asking for access to your account. Sign in to continue.</p>` : '';

export function signInPage({ csrf, returnTo, login, error, application }: SignInView): string {
  const described = error ? html` aria-describedby="form-error" aria-invalid="true"` : '';
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
${asking(application)}
${formError(error)}
<form method="post" action="/users/sign_in">
${csrfField(csrf)}
${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : ''}
<div class="field"><label for="login">Username or e-mail</label>
<input id="login" name="login" type="text" autocomplete="username" required maxlength="255" value="${login ?? ''}"${described}></div>
<div class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}></div>
<button type="submit">Sign in</button>
</form>`,
    null,
  );
}

export interface TwoFactorView {
  csrf: string;
  returnTo?: string | undefined;
  error?: string | undefined;
  application?: string | undefined;
}

/** The second step for an account with two-factor authentication: the code of its authenticator app. */
export function twoFactorPage({ csrf, returnTo, error, application }: TwoFactorView): string {
  const described = error ? html` aria-describedby="form-error" aria-invalid="true"` : '';
  return layout(
    'Two-factor authentication',
    html`<h1>Two-factor authentication</h1>
${asking(application)}
<p>Enter the six-digit code your authenticator app shows for this account.</p>
${formError(error)}
<form method="post" action="/users/sign_in">
${csrfField(csrf)}
${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : ''}
<div class="field"><label for="otp_attempt">Code</label>
<input id="otp_attempt" name="otp_attempt" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxlength="32" autofocus${described}></div>
<button type="submit">Verify</button>
</form>`,
    null,
  );
}
