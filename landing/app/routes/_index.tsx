import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { data, redirect } from '@remix-run/node';
import { useActionData, useLoaderData } from '@remix-run/react';
import { getEnv, pageCaptcha } from '~/env.server';
import { handleLeadForm, freshForm } from '~/leads/lead-form.server';
import { clearSentCookie, sentCookie, sentCookieRecent } from '~/leads/request-sent';
import { pageSource } from '~/leads/source.server';
import { LeadForm } from '~/leads/lead-form';
import { useAnalytics } from '~/root';

export const meta: MetaFunction = () => [
  { title: 'Стикеры с вашими героями — Stickers' },
  { name: 'description', content: 'Нарисуем набор стикеров для Telegram по вашим фото: свадьба, команда, питомец, праздник.' },
];

interface LoadContext {
  clientAddress?: string;
}

export function loader({ request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  if (url.searchParams.has('again')) {
    // «Отправить ещё одну заявку»: the sent memory cleared, and the page without `again` in its address. Were the form
    // shown at `/?again`, it would post there, this loader would run again for the answer and clear the sent cookie
    // the action has just set.
    url.searchParams.delete('again');
    return redirect(`${url.pathname}${url.search}`, { headers: { 'Set-Cookie': clearSentCookie } });
  }
  const sent = sentCookieRecent(request.headers.get('cookie'));
  return data({ ...freshForm(), sent, source: pageSource(request), captcha: pageCaptcha(getEnv()) });
}

export async function action({ request, context }: ActionFunctionArgs) {
  const result = await handleLeadForm(request, (context as LoadContext).clientAddress);
  return data(result, result.state === 'sent' ? { headers: { 'Set-Cookie': sentCookie() } } : undefined);
}

export default function Index() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const analytics = useAnalytics();
  return (
    <main>
      <section className="hero">
        <p className="eyebrow">Stickers · стикерпаки на заказ</p>
        <h1>Стикеры с вашими героями — за три дня</h1>
        <p className="lead">
          Пришлите несколько фото — нарисуем набор стикеров для Telegram в едином стиле: свадьба, команда, питомец или праздник. Первые
          эскизы покажем бесплатно.
        </p>
        <ul className="points">
          <li>
            <strong>от 12 стикеров</strong> в наборе
          </li>
          <li>
            <strong>3 дня</strong> до готового пака
          </li>
          <li>
            <strong>правки</strong> до результата
          </li>
        </ul>
      </section>
      <section className="card" aria-labelledby="form-title">
        <h2 id="form-title">Оставить заявку</h2>
        <LeadForm
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
        />
      </section>
    </main>
  );
}
