// Two small charts without a library. Each is readable without sight: the bar chart is a table whose
// cells hold the bars, the line chart an SVG with a summary label and its data as a table beside it.
import { html } from './lib.js';
import { Bar } from './ui.js';

export function BarChart({ title, rows, unit = '%' }) {
  return html`<figure class="chart bars">
    <figcaption>${title}</figcaption>
    <table>
      <tbody>
        ${rows.map((r, i) => html`<tr key=${i}>
          <th scope="row">${r.label}</th>
          <td class="bar-cell"><${Bar} value=${r.value} label=${r.label} /></td>
          <td class="num">${unit === '%' ? `${Math.round(r.value * 100)}%` : r.value}</td>
          ${r.note !== undefined && html`<td class="meta">${r.note}</td>`}
        </tr>`)}
      </tbody>
    </table>
  </figure>`;
}

// points: [{x: Date, y: 0..1, label}], plotted over time; y from 0 to 1.
export function LineChart({ title, points, yLabel, dateLabel }) {
  const width = 640;
  const height = 220;
  const pad = { l: 40, r: 12, t: 12, b: 28 };
  const sorted = [...points].sort((a, b) => a.x - b.x);
  const x0 = sorted[0]?.x.getTime() ?? 0;
  const x1 = sorted.at(-1)?.x.getTime() ?? 1;
  const sx = (x) => pad.l + (x1 === x0 ? 0.5 : (x.getTime() - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const sy = (y) => pad.t + (1 - y) * (height - pad.t - pad.b);
  const path = sorted.map((p, i) => `${i ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
  const mean = sorted.reduce((s, p) => s + p.y, 0) / (sorted.length || 1);
  const summary = `${title}: ${sorted.length} · ${yLabel} ${Math.round(mean * 100)}%`;
  return html`<figure class="chart line">
    <figcaption>${title}</figcaption>
    <svg viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${summary} preserveAspectRatio="xMidYMid meet">
      ${[0, 0.5, 1].map((y) => html`<g key=${y}>
        <line class="grid" x1=${pad.l} x2=${width - pad.r} y1=${sy(y)} y2=${sy(y)} />
        <text class="axis" x=${pad.l - 6} y=${sy(y) + 4} text-anchor="end">${Math.round(y * 100)}%</text>
      </g>`)}
      ${sorted.length > 1 && html`<path class="series" d=${path} />`}
      ${sorted.map((p, i) => html`<circle key=${i} class=${p.flagged ? 'dot flagged' : 'dot'} cx=${sx(p.x)} cy=${sy(p.y)} r="4" />`)}
      ${sorted.length > 0 && html`<text class="axis" x=${pad.l} y=${height - 8}>${sorted[0].x.toLocaleDateString()}</text>
        <text class="axis" x=${width - pad.r} y=${height - 8} text-anchor="end">${sorted.at(-1).x.toLocaleDateString()}</text>`}
    </svg>
    <details><summary>${dateLabel}</summary>
      <table><tbody>${sorted.map((p, i) => html`<tr key=${i}><td>${p.x.toLocaleString()}</td><td class="num">${Math.round(p.y * 100)}%</td><td>${p.label || ''}</td></tr>`)}</tbody></table>
    </details>
  </figure>`;
}
