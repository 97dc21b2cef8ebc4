import { useEffect, useRef } from 'react';
import { CAPTCHA_SPECS, widgetScriptUrl, type PageCaptcha } from './providers';

/** The global function the widget script calls once its API is there (`onload` of its query). */
const ONLOAD = '__stickersCaptchaLoaded';

/** The parts of a provider's JavaScript API the form uses (the same names for Turnstile, SmartCaptcha and hCaptcha). */
interface WidgetApi {
  render(container: HTMLElement, params: { sitekey: string }): unknown;
  reset(widgetId?: unknown): void;
}

type CaptchaWindow = Window & Record<string, unknown>;

/**
 * The captcha's widget: an empty container in the page's HTML; after hydration the provider's script is loaded once
 * (explicit rendering) and renders the widget into it, which writes its token into the provider's hidden field inside
 * the form. `resetKey`: when it changes to a truthy value, the widget is reset (its token was used or refused).
 * Without JavaScript nothing renders: the `<noscript>` line (`noScript`, in the page's language) says the check needs it.
 */
export function CaptchaWidget({ captcha, resetKey, noScript }: { captcha: PageCaptcha; resetKey: unknown; noScript: string }) {
  const container = useRef<HTMLDivElement>(null);
  const widgetId = useRef<unknown>(undefined);
  const spec = CAPTCHA_SPECS[captcha.provider];

  useEffect(() => {
    const w = window as unknown as CaptchaWindow;
    const api = () => w[spec.global] as WidgetApi | undefined;
    const render = () => {
      const el = container.current;
      if (!el || widgetId.current !== undefined || !api()) return;
      widgetId.current = api()!.render(el, { sitekey: captcha.siteKey });
    };
    if (api()) return render();
    w[ONLOAD] = render;
    if (!document.querySelector('script[data-captcha-script]')) {
      const script = document.createElement('script');
      script.src = widgetScriptUrl(captcha, ONLOAD);
      script.async = true;
      script.dataset.captchaScript = captcha.provider;
      document.head.appendChild(script);
    }
  }, [captcha, spec]);

  useEffect(() => {
    const api = (window as unknown as CaptchaWindow)[spec.global] as WidgetApi | undefined;
    if (resetKey && api && widgetId.current !== undefined) api.reset(widgetId.current);
  }, [resetKey, spec]);

  return (
    <div className="captcha">
      <div ref={container} className="captcha-widget" data-captcha={captcha.provider} />
      <noscript>
        <p className="hint">{noScript}</p>
      </noscript>
    </div>
  );
}
