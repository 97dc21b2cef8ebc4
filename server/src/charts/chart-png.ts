import { Resvg } from '@resvg/resvg-js';

/** Where Debian (and most Linux systems) keep fonts; a missing folder is skipped. */
const FONT_DIRS = ['/usr/share/fonts', '/usr/local/share/fonts'];

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An SVG with explicit colours as a PNG by resvg; the usual font folders too (a slim image has no fontconfig), else no text. */
export function svgToPng(
  svg: string,
  options: { scale?: number; systemFonts?: boolean } = {},
): { png: Buffer; width: number; height: number } {
  const systemFonts = options.systemFonts ?? true;
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: options.scale ?? 1 },
    font: {
      loadSystemFonts: systemFonts,
      fontDirs: systemFonts ? FONT_DIRS : [],
      defaultFontFamily: 'DejaVu Sans',
    },
  });
  const image = resvg.render();
  return { png: image.asPng(), width: image.width, height: image.height };
}
