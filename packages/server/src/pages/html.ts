// Minimal HTML building: every interpolated value goes through `escapeHtml`.
const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => entities[c]!);
}

/** A tagged template whose interpolations are escaped unless they are `SafeHtml` (from `html` itself or `raw`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** A complete page; `header` (navigation) goes before the main landmark. */
export function layout(title: string, body: SafeHtml, header?: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - tokenbell</title>
<link rel="stylesheet" href="/assets/tokenbell.css">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
</head>
<body>
${header}
<main>
${body}
</main>
</body>
</html>
`.value;
}

/** What went wrong, what to do about it, and a way back: an error page never ends the visit. */
export function errorPage(title: string, message: string, advice?: string): string {
  return layout(
    title,
    html`<h1>${title}</h1>
<p class="error" role="alert">${message}</p>
${advice ? html`<p>${advice}</p>` : ''}
<p><a href="/">Go to the tokenbell home page</a></p>`,
  );
}
