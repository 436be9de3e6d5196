// The one stylesheet the pages link. Served from this origin so the CSP can stay at style-src 'self'.
import type { RequestHandler } from 'express';
import { bellPath } from './html.js';

export const stylesheetPath = '/assets/tokenbell.css';

export const stylesheet = `:root { color-scheme: light dark; --accent: #1f75cb; --danger: #c91c00; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
/* Darker shades than the light scheme's would not reach 4.5:1 on a dark page; buttons then take dark text. */
@media (prefers-color-scheme: dark) { :root { --accent: #6aaef0; --danger: #ff8a75; } button { color: #000; } }
.skip-link { position: absolute; left: 1rem; top: -10rem; padding: 0.25rem 0.5rem; background: Canvas; }
.skip-link:focus { top: 0.5rem; }
header.site { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem 1rem; border-bottom: 1px solid #8884; padding: 0.5rem 1rem; }
.brand { display: inline-flex; align-items: center; gap: 0.4rem; font-weight: 700; font-size: 1.2rem; color: inherit; text-decoration: none; }
.brand svg { color: var(--accent); }
header.site nav { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; }
header.site ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0; }
header.site form p { margin: 0; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.75rem; line-height: 1.25; }
h2 { font-size: 1.3rem; line-height: 1.3; }
footer.site { border-top: 1px solid #8884; margin-top: 2rem; padding: 0.75rem 1rem; font-size: 0.9em; text-align: center; }
footer.site p { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.field { margin: 0 0 1rem; }
label { display: block; font-weight: 600; }
.choice label { display: inline; font-weight: normal; }
input[type="text"], input[type="password"], input[type="date"], textarea { width: 100%; max-width: 36rem; padding: 0.4rem; font: inherit; }
fieldset { margin: 0 0 1rem; border: 1px solid #8886; }
button { font: inherit; padding: 0.4rem 1rem; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: inherit; }
button.danger { background: var(--danger); border-color: var(--danger); }
.actions { display: flex; gap: 1rem; }
.error { color: var(--danger); font-weight: 600; }
.notice { border-left: 4px solid var(--accent); padding: 0.25rem 0.75rem; }
.warning { border-left: 4px solid var(--danger); padding: 0.25rem 0.75rem; }
.hint { margin: 0.25rem 0 0; font-size: 0.9em; opacity: 0.8; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem; border-bottom: 1px solid #8884; }
td form { margin: 0; }
ul.plain { list-style: none; margin: 0; padding: 0; }
code { overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
/* On a phone each row of a list table becomes a block whose cells carry their column's name (listTable). */
@media (max-width: 40rem) {
  table.stacking thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.stacking tr { display: block; padding: 0.5rem 0; border-bottom: 1px solid #8884; }
  table.stacking th, table.stacking td { display: block; padding: 0.15rem 0; border: 0; }
  table.stacking td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  table.stacking td.actions-cell { padding-top: 0.4rem; }
}
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
`;

export const serveStylesheet: RequestHandler = (_req, res) => {
  res.set('Cache-Control', 'public, max-age=3600').type('text/css').send(stylesheet);
};

/**
 * The tab's icon, a bell, as SVG, at the address browsers ask for on their own (/favicon.ico), which every page also
 * links: without it, each page view logged a 404.
 */
export const faviconPath = '/favicon.ico';

export const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="#1f75cb" d="${bellPath}"/></svg>`;

export const serveFavicon: RequestHandler = (_req, res) => {
  res.set('Cache-Control', 'public, max-age=86400').type('image/svg+xml').send(favicon);
};
