import { LIGHT_PALETTE, perDaySize, perDaySvg } from './chart-svg';
import { PNG_SIGNATURE, svgToPng } from './chart-png';
import { ru as t } from '../i18n/ru';

const chart = {
  days: ['2026-11-28', '2026-11-29'],
  series: [
    { source: 'wedding', counts: [1, 2] },
    { source: null, counts: [0, 1] },
  ],
};

describe('svgToPng', () => {
  it('draws the chart at its size times the scale', () => {
    const { png, width, height } = svgToPng(perDaySvg(chart, { t, palette: LIGHT_PALETTE, legend: true }), { scale: 2 });
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect({ width, height }).toEqual({ width: perDaySize(true).width * 2, height: perDaySize(true).height * 2 });
  });

  it('still draws the bars when no font is loaded (the text is left out)', () => {
    const svg = perDaySvg(chart, { t, palette: LIGHT_PALETTE, legend: true });
    const withFonts = svgToPng(svg);
    const without = svgToPng(svg, { systemFonts: false });
    expect(without.png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect([without.width, without.height]).toEqual([withFonts.width, withFonts.height]);
  });

  it('gives every bar its colour from the palette, for a renderer without CSS', () => {
    const svg = perDaySvg(chart, { t, palette: LIGHT_PALETTE });
    expect(svg).toContain(`class="bar s0" x=`);
    expect(svg.match(new RegExp(`fill="${LIGHT_PALETTE.series[0]}"`, 'g'))).toHaveLength(2);
    expect(svg.match(new RegExp(`fill="${LIGHT_PALETTE.series[1]}"`, 'g'))).toHaveLength(1);
    expect(svg).not.toContain('currentColor');
  });
});
