import { data } from '@remix-run/node';

/**
 * Every address with no page of its own: a 404 shown by the root's error boundary. Matched here (not left unmatched),
 * the root's loader runs, so the 404 page is in the page's language (LANDING_LOCALE) and has its `lang`.
 */
function notFound(): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- Remix answers a thrown response with its status
  throw data(null, { status: 404, statusText: 'Not Found' });
}

export const loader = notFound;
export const action = notFound;

/** Never shown (the loader always throws); a route without a component would answer data, not a page. */
export default function NoPage() {
  return null;
}
