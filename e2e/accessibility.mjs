// axe-core in a Playwright page: the WCAG 2.0/2.1 A and AA rules, run on the page as it is now. The library's own
// Playwright wrapper needs a newer Node than this project's, so its script is injected the documented way.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = require('axe-core').source;
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** The WCAG 2.1 AA violations axe-core finds on the page, each as "rule: target, target (help)". */
export async function wcagViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ content: AXE_SOURCE });
  const result = await page.evaluate(
    (tags) => window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    WCAG_21_AA,
  );
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')} (${v.help})`);
}

/**
 * The same for a page seen without JavaScript, where axe cannot run: its HTML as rendered, without its scripts, is
 * served at its own address to a page of `browser` that runs axe (the styles load from the landing as before).
 */
export async function wcagViolationsWithoutScripts(browser, page) {
  const html = (await page.content()).replace(/<script\b[\s\S]*?<\/script>/gi, '');
  const url = page.url();
  const context = await browser.newContext({ viewport: page.viewportSize() ?? undefined });
  try {
    await context.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }));
    const copy = await context.newPage();
    await copy.goto(url);
    return await wcagViolations(copy);
  } finally {
    await context.close();
  }
}
