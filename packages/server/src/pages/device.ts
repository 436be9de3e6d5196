// The device verification pages (RFC 8628 section 3.3): the code form, the confirmation naming who asks for what,
// and the answer, which sends the user back to their device.
import type { ApplicationRecord, Scope, UserRecord } from '../domain/storage/records.js';
import { html } from './html.js';
import { applicationRequest, csrfField, formError, signedInPage } from './frame.js';

export interface DeviceCodeView {
  user: UserRecord;
  csrf: string;
  /** What to fill the field with: the code of the link, or what the user typed before. */
  userCode?: string | undefined;
  error?: string | undefined;
}

/** The form asking for the code the device shows. */
export function deviceCodePage({ user, csrf, userCode, error }: DeviceCodeView): string {
  const described = error ? html` aria-describedby="form-error user_code-hint" aria-invalid="true"` : html` aria-describedby="user_code-hint"`;
  return signedInPage(
    'Connect a device',
    user,
    csrf,
    html`<h1>Connect a device</h1>
<p>Enter the code your device or command-line tool shows to let it use your account <strong>${user.username}</strong>.
You will see what it asks for before anything is shared.</p>
${formError(error)}
<form method="post" action="/oauth/device/confirm">
${csrfField(csrf)}
<div class="field"><label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required maxlength="64" value="${userCode ?? ''}"${described}${userCode ? '' : html` autofocus`}>
<p class="hint" id="user_code-hint">8 letters and digits, such as WDJB-MJHT. Upper or lower case, spaces and hyphens make no difference.</p></div>
<button type="submit">Continue</button>
</form>`,
  );
}

export interface DeviceConfirmView {
  user: UserRecord;
  csrf: string;
  application: ApplicationRecord;
  /** Who registered the application, when that account still exists. */
  owner: UserRecord | undefined;
  scopes: readonly Scope[];
  /** The code as the device shows it (WDJB-MJHT), so the user can compare the two. */
  displayedCode: string;
  /** The code as the form carries it. */
  userCode: string;
}

/** Who asks, as whom, for what; Authorize or Deny (the service has no Deny; RFC 8628 section 3.3 does). */
export function deviceConfirmPage({ user, csrf, application, owner, scopes, displayedCode, userCode }: DeviceConfirmView): string {
  return signedInPage(
    `Authorize ${application.name}`,
    user,
    csrf,
    html`<h1>Authorize ${application.name} to use your account?</h1>
<p>A device showing the code <strong><code>${displayedCode}</code></strong> is asking, as the application
<strong>${application.name}</strong>, for access to your tokenbell account <strong>${user.username}</strong>. Only
authorize it if you started this on a device of your own and it shows this code.</p>
${applicationRequest(owner, scopes)}
<form method="post" action="/oauth/device">
${csrfField(csrf)}
<input type="hidden" name="user_code" value="${userCode}">
<div class="actions">
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}

/** The answer is recorded: the device learns it at its next poll. */
export function deviceAnsweredPage(user: UserRecord, csrf: string, application: ApplicationRecord, decision: 'approve' | 'deny'): string {
  const approved = decision === 'approve';
  return signedInPage(
    approved ? 'Device connected' : 'Device denied',
    user,
    csrf,
    approved
      ? html`<h1>Device connected</h1>
<p role="status"><strong>${application.name}</strong> can now use your account <strong>${user.username}</strong>. Go back to
your device: it continues on its own in a few seconds.</p>
<p>You can revoke its access at any time on <a href="/profile/applications">Applications</a>.</p>`
      : html`<h1>Device denied</h1>
<p role="status"><strong>${application.name}</strong> was not given access to your account. You can close this page; the
device will say that access was denied.</p>`,
  );
}
