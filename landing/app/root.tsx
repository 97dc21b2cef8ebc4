import {
  isRouteErrorResponse,
  Links,
  Meta,
  Outlet,
  Scripts,
  ScrollRestoration,
  useRouteError,
  useRouteLoaderData,
  type ShouldRevalidateFunction,
} from '@remix-run/react';
import type { LinksFunction, MetaFunction } from '@remix-run/node';
import { DEFAULT_LOCALE, type Locale } from '@stickers/shared';
import { getEnv } from './env.server';
import { LANDING_MESSAGES } from './i18n';
import { counterBootstrap, ga4Script, METRIKA_SCRIPT, type AnalyticsConfig } from './leads/analytics';
import styles from './styles.css?url';

export const links: LinksFunction = () => [
  { rel: 'stylesheet', href: styles },
  { rel: 'icon', href: '/favicon.svg', type: 'image/svg+xml' },
];

/**
 * The analytics counter, when one is configured (LANDING_METRIKA_ID / LANDING_GA4_ID with LANDING_GOAL); else null.
 * The locale (LANDING_LOCALE): the page's `lang`.
 */
export function loader(): { analytics: AnalyticsConfig | null; locale: Locale } {
  const env = getEnv();
  return { analytics: env.analytics, locale: env.locale };
}

/**
 * The title of the error boundary's page (a 404, a page that failed): the deepest route's `meta` names a page, and
 * under the root's boundary that is the root's. Elsewhere the index route's wins.
 */
export const meta: MetaFunction<typeof loader> = ({ data, error }) => {
  const t = LANDING_MESSAGES[data?.locale ?? DEFAULT_LOCALE];
  if (!error) return [{ title: t.meta.title }];
  return [{ title: isRouteErrorResponse(error) && error.status === 404 ? t.missing.notFoundTitle : t.missing.failedTitle }];
};

/** Its data is the configuration: never fetched again after the form's post (see the index route's shouldRevalidate). */
export const shouldRevalidate: ShouldRevalidateFunction = ({ formMethod, defaultShouldRevalidate }) =>
  formMethod?.toUpperCase() === 'POST' ? false : defaultShouldRevalidate;

/** The page's analytics configuration, for the sent screen's goal; null when none (or outside the root's data). */
export function useAnalytics(): AnalyticsConfig | null {
  return useRouteLoaderData<typeof loader>('root')?.analytics ?? null;
}

/**
 * The configured counters' scripts: the inline bootstrap (the functions the page calls, the counter's start) and the
 * vendor's script. Nothing at all without a configured counter: the page then loads nothing from any other host.
 */
function Counters({ analytics }: { analytics: AnalyticsConfig | null }) {
  if (!analytics) return null;
  return (
    <>
      <script dangerouslySetInnerHTML={{ __html: counterBootstrap(analytics) }} />
      {analytics.metrikaId ? <script async src={METRIKA_SCRIPT} /> : null}
      {analytics.ga4Id ? <script async src={ga4Script(analytics.ga4Id)} /> : null}
    </>
  );
}

export function Layout({ children }: { children: React.ReactNode }) {
  const analytics = useAnalytics();
  // Outside the root's data (an error page before its loader ran) the default locale's.
  const locale = useRouteLoaderData<typeof loader>('root')?.locale ?? DEFAULT_LOCALE;
  return (
    <html lang={locale}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
        <Counters analytics={analytics} />
      </head>
      <body>
        {children}
        <ScrollRestoration />
        <Scripts />
      </body>
    </html>
  );
}

export default function App() {
  return <Outlet />;
}

/** An address with no page (404), or a page that failed: one line in the page's language and the way back to the form. */
export function ErrorBoundary() {
  const error = useRouteError();
  const t = LANDING_MESSAGES[useRouteLoaderData<typeof loader>('root')?.locale ?? DEFAULT_LOCALE].missing;
  return (
    <main>
      <h1>{isRouteErrorResponse(error) && error.status === 404 ? t.notFound : t.failed}</h1>
      <p>
        <a href="/">{t.back}</a>
      </p>
    </main>
  );
}
