import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import type { ClientActionFunctionArgs, ShouldRevalidateFunction } from '@remix-run/react';
import { data, redirect } from '@remix-run/node';
import { useActionData, useLoaderData } from '@remix-run/react';
import { getEnv, pageCaptcha } from '~/env.server';
import { handleLeadForm, freshForm, type ActionResult } from '~/leads/lead-form.server';
import { readValues } from '~/leads/form-fields';
import { clearSentCookie, sentCookie, sentCookieRecent } from '~/leads/request-sent';
import { pageSource } from '~/leads/source.server';
import { LeadForm } from '~/leads/lead-form';
import { LANDING_MESSAGES } from '~/i18n';
import { useAnalytics } from '~/root';

export const meta: MetaFunction<typeof loader> = ({ data }) => {
  const t = LANDING_MESSAGES[data && 'locale' in data ? data.locale : 'ru'].meta;
  return [{ title: t.title }, { name: 'description', content: t.description }];
};

interface LoadContext {
  clientAddress?: string;
}

export function loader({ request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  if (url.searchParams.has('again')) {
    // "Send another request": the sent memory cleared, and the page without `again` in its address. Were the form
    // shown at `/?again`, it would post there, this loader would run again for the answer and clear the sent cookie
    // the action has just set.
    url.searchParams.delete('again');
    return redirect(`${url.pathname}${url.search}`, { headers: { 'Set-Cookie': clearSentCookie } });
  }
  const sent = sentCookieRecent(request.headers.get('cookie'));
  // The locale (LANDING_LOCALE) names the catalogue the page and the form's checks in the browser word their texts from.
  const env = getEnv();
  return data({
    ...freshForm(),
    sent,
    source: pageSource(request),
    captcha: pageCaptcha(env),
    locale: env.locale,
    telegramContact: env.telegramContact,
  });
}

export async function action({ request, context }: ActionFunctionArgs) {
  const result = await handleLeadForm(request, (context as LoadContext).clientAddress);
  return data(result, result.state === 'sent' ? { headers: { 'Set-Cookie': sentCookie() } } : undefined);
}

/**
 * In the browser the post goes through here: when it cannot reach the landing, or the answer is not the action's (a
 * refused connection during a deploy, a proxy's 502 page), the form stays as typed with the error, with the same
 * request id and token, so sending again delivers it once. Never Remix's error page.
 */
export async function clientAction({ request, serverAction }: ClientActionFunctionArgs): Promise<ActionResult> {
  const form = await request.clone().formData();
  try {
    return await serverAction<typeof action>();
  } catch {
    const field = (name: string) => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    return { state: 'error', requestId: field('requestId'), startedAt: field('startedAt'), values: readValues(form) };
  }
}

/**
 * No loader runs again after a post: the action's answer carries everything the form needs (its request id, token,
 * values), and a fetch of the page's data after a post that could not reach the landing (the visitor offline, the
 * landing down) would fail too and replace the form with Remix's error page. The root does the same.
 */
export const shouldRevalidate: ShouldRevalidateFunction = ({ formMethod, defaultShouldRevalidate }) =>
  formMethod?.toUpperCase() === 'POST' ? false : defaultShouldRevalidate;

export default function Index() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof clientAction>();
  const analytics = useAnalytics();
  const t = LANDING_MESSAGES[page.locale];
  return (
    <main>
      <section className="hero">
        <p className="eyebrow">{t.hero.eyebrow}</p>
        <h1>{t.hero.title}</h1>
        <p className="lead">{t.hero.lead}</p>
        <ul className="points">
          {t.hero.points.map(([bold, rest]) => (
            <li key={bold}>
              <strong>{bold}</strong>
              {rest}
            </li>
          ))}
        </ul>
      </section>
      {/* Its heading (`form-title`) is the form's, or the sent screen's news: LeadForm's. */}
      <section className="card" aria-labelledby="form-title">
        <LeadForm
          locale={page.locale}
          requestId={page.requestId}
          startedAt={page.startedAt}
          phoneRegion={page.phoneRegion}
          requiredContacts={page.requiredContacts}
          privacyUrl={page.privacyUrl}
          sentBefore={page.sent}
          source={page.source}
          result={result}
          analytics={analytics}
          captcha={page.captcha}
          telegramContact={page.telegramContact}
        />
      </section>
    </main>
  );
}
