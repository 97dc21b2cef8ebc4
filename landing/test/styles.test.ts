/**
 * The page's controls as the stylesheet draws them (WCAG 2.1 AA, beyond what axe-core checks): the edges of the inputs
 * and the focus ring at least 3:1 against the card's white (1.4.11, non-text contrast), and a consent box a finger can
 * hit on a phone.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const css = readFileSync(new URL('../app/styles.css', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');

/** The declarations of the rule whose selector list is exactly `selector`. */
function rule(selector: string): Record<string, string> {
  const blocks = [...css.matchAll(/([^{}]+)\{([^{}]*)\}/g)];
  const block = blocks.find(([, s]) => s.trim().replace(/\s+/g, ' ') === selector);
  if (!block) throw new Error(`no rule for ${selector}`);
  return Object.fromEntries(
    block[2]
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => [d.slice(0, d.indexOf(':')).trim(), d.slice(d.indexOf(':') + 1).trim()]),
  );
}

/** A value with the custom properties of `:root` put in, as many levels as it takes. */
function resolved(value: string): string {
  const root = rule(':root');
  let out = value;
  while (/var\(--[\w-]+\)/.test(out)) out = out.replace(/var\((--[\w-]+)\)/g, (_, name: string) => root[name]);
  return out;
}

/** The hex colour in a declaration, six digits (`1px solid #8a82a6` → `#8a82a6`, `#fff` → `#ffffff`). */
function colourOf(value: string): string {
  const hex = /#([0-9a-f]{6}|[0-9a-f]{3})\b/i.exec(resolved(value));
  if (!hex) throw new Error(`no colour in ${value}`);
  return hex[1].length === 3 ? `#${[...hex[1]].map((d) => d + d).join('')}` : hex[0];
}

/** WCAG 2.x contrast ratio of two colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe('the controls on the card', () => {
  const card = colourOf(rule('.card').background);

  it("the inputs' edges are at least 3:1 against the card", () => {
    expect(contrast(colourOf(rule('input, textarea').border), card)).toBeGreaterThanOrEqual(3);
  });

  it('the focus ring is at least 3:1 against the card', () => {
    expect(
      contrast(colourOf(rule('input:focus-visible, textarea:focus-visible, button:focus-visible, a:focus-visible').outline), card),
    ).toBeGreaterThanOrEqual(3);
  });

  it('the consent box is at least 20 px square, not the browser’s 13 px', () => {
    const box = rule(".consent input[type='checkbox']");
    expect(parseFloat(box.width)).toBeGreaterThanOrEqual(20);
    expect(parseFloat(box.height)).toBeGreaterThanOrEqual(20);
  });
});
