// The sign-in page.
import { html, layout } from './html.js';
import { csrfField, formError } from './frame.js';

export interface SignInView {
  csrf: string;
  /** A checked local path, or undefined. */
  returnTo?: string | undefined;
  login?: string | undefined;
  error?: string | undefined;
}

export function signInPage({ csrf, returnTo, login, error }: SignInView): string {
  const described = error ? html` aria-describedby="form-error" aria-invalid="true"` : '';
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
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
  );
}
