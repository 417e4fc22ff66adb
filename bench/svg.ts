// Minimal SVG line charts for the benchmark: stacked panels, log-scale x (replicas),
// linear or log y, one coloured line per series, a shared legend. No dependencies.

export interface Series {
  readonly name: string;
  readonly points: ReadonlyArray<{ x: number; y: number }>;
}

export interface Panel {
  readonly label: string;
  readonly series: readonly Series[];
  readonly logY?: boolean;
  /** Added to every y before plotting on a log axis (so 0 can be shown); tick labels subtract it. */
  readonly yOffset?: number;
}

const COLOURS = ['#d62728', '#7f7f7f', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const WIDTH = 760;
const PANEL_HEIGHT = 260;
const MARGIN = { left: 70, right: 20, top: 30, bottom: 40 };

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function lineChart(chart: { title: string; panels: readonly Panel[] }): string {
  const legendHeight = 24 * Math.ceil((chart.panels[0]?.series.length ?? 0) / 3) + 10;
  const height = 40 + chart.panels.length * (PANEL_HEIGHT + MARGIN.top + MARGIN.bottom) + legendHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="16">${escape(chart.title)}</text>`,
  ];
  chart.panels.forEach((panel, p) => parts.push(renderPanel(panel, 40 + p * (PANEL_HEIGHT + MARGIN.top + MARGIN.bottom))));
  const legendTop = height - legendHeight + 10;
  (chart.panels[0]?.series ?? []).forEach((s, k) => {
    const x = MARGIN.left + (k % 3) * 230;
    const y = legendTop + Math.floor(k / 3) * 24;
    parts.push(`<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${COLOURS[k % COLOURS.length]}" stroke-width="2.5"/>`);
    parts.push(`<text x="${x + 30}" y="${y + 4}">${escape(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function renderPanel(panel: Panel, top: number): string {
  const all = panel.series.flatMap((s) => s.points);
  if (all.length === 0) return '';
  const offset = panel.yOffset ?? 0;
  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);
  const [x0, x1] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs))];
  const ty = (y: number) => (panel.logY ? Math.log10(Math.max(y, 1e-3)) : y);
  let [y0, y1] = [Math.min(...ys.map(ty)), Math.max(...ys.map(ty))];
  if (panel.logY) [y0, y1] = [Math.floor(y0), Math.ceil(y1)];
  if (y1 === y0) y1 = y0 + 1;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const sx = (x: number) => MARGIN.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * plotW;
  const sy = (y: number) => top + MARGIN.top + PANEL_HEIGHT - ((ty(y) - y0) / (y1 - y0)) * PANEL_HEIGHT;
  const out: string[] = [`<text x="${MARGIN.left}" y="${top + 18}" font-size="13">${escape(panel.label)}</text>`];
  const bottom = top + MARGIN.top + PANEL_HEIGHT;
  out.push(`<rect x="${MARGIN.left}" y="${top + MARGIN.top}" width="${plotW}" height="${PANEL_HEIGHT}" fill="none" stroke="#ccc"/>`);
  for (const x of [2, 5, 10, 20, 50, 100, 200, 500, 1000].filter((v) => Math.log10(v) >= x0 - 1e-9 && Math.log10(v) <= x1 + 1e-9)) {
    out.push(`<line x1="${sx(x)}" y1="${top + MARGIN.top}" x2="${sx(x)}" y2="${bottom}" stroke="#eee"/>`);
    out.push(`<text x="${sx(x)}" y="${bottom + 16}" text-anchor="middle">${x}</text>`);
  }
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${bottom + 32}" text-anchor="middle">replicas n (log)</text>`);
  // With an offset (log axis showing 0), label round values: 0, 1, 10, 100, …
  const ticks = panel.logY
    ? offset > 0
      ? [0, ...range(0, y1).map((e) => 10 ** e)].map((v) => v + offset).filter((t) => Math.log10(t) <= y1 + 1e-9 && Math.log10(t) >= y0 - 1e-9)
      : range(y0, y1).map((e) => 10 ** e)
    : [y0, (y0 + y1) / 2, y1];
  for (const t of ticks) {
    out.push(`<line x1="${MARGIN.left}" y1="${sy(t)}" x2="${MARGIN.left + plotW}" y2="${sy(t)}" stroke="#eee"/>`);
    const label = Number((t - offset).toPrecision(3));
    out.push(`<text x="${MARGIN.left - 6}" y="${sy(t) + 4}" text-anchor="end">${label}</text>`);
  }
  // The first series (this engine) is drawn last, on top.
  [...panel.series.entries()].reverse().forEach(([k, s]) => {
    if (s.points.length === 0) return;
    const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    const colour = COLOURS[k % COLOURS.length];
    out.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="${k === 0 ? 3 : 1.8}"/>`);
    for (const p of s.points) out.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2.5" fill="${colour}"/>`);
  });
  return out.join('\n');
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v++) out.push(v);
  return out;
}
