// The one way every list answers a page, as the service does: `page` (from 1) and `per_page` (20 by default, at most
// 100), and the X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page, X-Prev-Page and Link headers that clients
// walk (gitbeaker and python-gitlab follow `X-Next-Page` or `Link`).
import type { Request, Response } from 'express';

const defaultPerPage = 20;
const maxPerPage = 100;
/** Query parameters that carry a secret: a Link header never repeats them, unlike the rest of the request's query. */
const secretParams = ['access_token', 'private_token'];

/** Answers the page of `items` that the request asks for, each as `present` shows it, with the pagination headers. */
export async function sendPage<T, R>(req: Request, res: Response, baseUrl: string, items: readonly T[], present: (item: T) => R | Promise<R>): Promise<void> {
  const query = req.query as Record<string, unknown>;
  const perPage = Math.min(Number(query.per_page ?? defaultPerPage) || defaultPerPage, maxPerPage);
  const page = Number(query.page ?? 1) || 1;
  const totalPages = Math.max(1, Math.ceil(items.length / perPage));
  const next = page < totalPages ? page + 1 : null;
  const prev = page > 1 ? Math.min(page - 1, totalPages) : null;

  const url = new URL(req.originalUrl, baseUrl);
  for (const name of secretParams) url.searchParams.delete(name);
  url.searchParams.set('per_page', String(perPage));
  const pageUrl = (n: number) => {
    url.searchParams.set('page', String(n));
    return `<${url.href}>`;
  };
  const links = [
    ...(prev === null ? [] : [`${pageUrl(prev)}; rel="prev"`]),
    ...(next === null ? [] : [`${pageUrl(next)}; rel="next"`]),
    `${pageUrl(1)}; rel="first"`,
    `${pageUrl(totalPages)}; rel="last"`,
  ];
  res.set({
    'X-Total': String(items.length),
    'X-Total-Pages': String(totalPages),
    'X-Page': String(page),
    'X-Per-Page': String(perPage),
    'X-Next-Page': next === null ? '' : String(next),
    'X-Prev-Page': prev === null ? '' : String(prev),
    Link: links.join(', '),
  });
  // Only the page is presented: a project's namespace, say, is one more question each.
  res.json(await Promise.all(items.slice((page - 1) * perPage, page * perPage).map(present)));
}
