/**
 * Telegram's theme as CSS variables (`--tg-theme-bg-color`…), as Telegram's own SDK sets them. Where a pair the page
 * puts text on falls under WCAG AA's 4.5:1, the text (or the button's background) is moved towards black or white until
 * it passes: the page follows the theme, and stays readable in every theme.
 */
const DEFAULTS: Record<string, string> = {
  bg_color: '#ffffff',
  secondary_bg_color: '#f1f1f4',
  text_color: '#000000',
  hint_color: '#646a70',
  link_color: '#1a6aa8',
  button_color: '#1f6fae',
  button_text_color: '#ffffff',
  destructive_text_color: '#c0292b',
  section_bg_color: '#ffffff',
};

type Rgb = [number, number, number];

function parse(hex: string | undefined): Rgb | null {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(hex?.trim() ?? '');
  if (!m) return null;
  const h = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as Rgb;
}

function hex(rgb: Rgb): string {
  return '#' + rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('');
}

function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t) as Rgb;
}

/** `fg`, moved towards black or white (whichever is further from `bg`) just enough for `ratio` against `bg`. */
function readable(fg: Rgb, bg: Rgb, ratio = 4.6): Rgb {
  if (contrast(fg, bg) >= ratio) return fg;
  const target: Rgb = luminance(bg) > 0.18 ? [0, 0, 0] : [255, 255, 255];
  for (let t = 0.05; t <= 1; t += 0.05) {
    const moved = mix(fg, target, t);
    if (contrast(moved, bg) >= ratio) return moved;
  }
  return target;
}

/** `bg` moved away from `fg` until `fg` reads on it (a button's colour under its own text). */
function backgroundFor(fg: Rgb, bg: Rgb, ratio = 4.6): Rgb {
  if (contrast(fg, bg) >= ratio) return bg;
  const target: Rgb = luminance(fg) > 0.18 ? [0, 0, 0] : [255, 255, 255];
  for (let t = 0.05; t <= 1; t += 0.05) {
    const moved = mix(bg, target, t);
    if (contrast(fg, moved) >= ratio) return moved;
  }
  return target;
}

/** The colours the page uses, from the theme's (Telegram's names) and the defaults, made readable. */
export function themeColours(params: Record<string, string>): Record<string, string> {
  const colour = (key: string): Rgb => parse(params[key]) ?? parse(DEFAULTS[key])!;
  const bg = colour('bg_color');
  const secondary = parse(params.secondary_bg_color) ?? mix(bg, luminance(bg) > 0.18 ? [0, 0, 0] : [255, 255, 255], 0.06);
  const text = readable(colour('text_color'), secondary);
  const buttonText = colour('button_text_color');
  const out: Record<string, Rgb> = {
    bg_color: bg,
    secondary_bg_color: secondary,
    text_color: text,
    hint_color: readable(readable(colour('hint_color'), bg), secondary),
    link_color: readable(readable(colour('link_color'), bg), secondary),
    button_color: backgroundFor(buttonText, colour('button_color')),
    button_text_color: buttonText,
    destructive_text_color: readable(readable(colour('destructive_text_color'), bg), secondary),
    section_bg_color: parse(params.section_bg_color) ?? bg,
  };
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, hex(v)]));
}

/** Sets `--tg-theme-*` on the document and its colour scheme (for form controls and scrollbars). */
export function applyTheme(params: Record<string, string>, root: HTMLElement = document.documentElement): void {
  const colours = themeColours(params);
  for (const [key, value] of Object.entries(colours)) root.style.setProperty(`--tg-theme-${key.replace(/_/g, '-')}`, value);
  root.style.colorScheme = luminance(parse(colours.bg_color)!) > 0.18 ? 'light' : 'dark';
}
