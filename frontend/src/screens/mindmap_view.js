// The mind map drawn as SVG: a tidy tree laid out left to right (d3-hierarchy, vendor/d3/, imported when a
// map first opens), nodes collapsed and expanded in place, panned and zoomed with the pointer (one finger
// drags, two pinch), the wheel, the keyboard (arrows, + and −) or the buttons. Colours and fonts are SVG
// attributes, not CSS, so the exported file (svgText, pngBlob) looks as the screen does.
import { html, useEffect, useMemo, useRef, useState } from '../lib.js';

const ROW = 34; // vertical room per node
const COLUMN = 260; // horizontal room per level: the longest label and the toggle
const CHARS = 28; // a label's characters before "…"
const FONT = '13px system-ui, -apple-system, Segoe UI, Roboto, sans-serif';
const CHAR_W = 7.6; // the estimated width of one at 13px, where no canvas measures it
const PAD = 24;
const COLOURS = { project: '#1d4ed8', document: '#1d4ed8', section: '#374151', concepts: '#92400e', concept: '#92400e' };
const MIN_K = 0.3;
const MIN_FIT = 0.55; // a fitted map stays readable on a phone: the rest is a drag away
const MAX_K = 2.5;

let d3Module;
export function loadLayout() {
  d3Module ||= import('../../vendor/d3/d3-hierarchy.min.mjs');
  return d3Module;
}

// A long label cut at a word's end (what shows must be whole words of the button's name: WCAG 2.5.3).
export function cutLabel(text) {
  if (text.length <= CHARS) return text;
  const head = text.slice(0, CHARS - 1);
  const space = head.lastIndexOf(' ');
  return (/\s/.test(text[CHARS - 1]) || space < CHARS / 2 ? head : head.slice(0, space)).trimEnd();
}

export const short = (text) => (text.length > CHARS ? `${cutLabel(text)}…` : text);

let measure;
function textWidth(text, bold) {
  measure ||= typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  if (!measure) return text.length * CHAR_W;
  measure.font = bold ? `700 ${FONT}` : FONT;
  return measure.measureText(text).width;
}

// The visible nodes (a collapsed node's descendants are not), placed; the edges between them; the
// concepts' links, each to the target or, while that is folded away, to its nearest visible ancestor.
export function layout(d3, map, expanded, concepts = '') {
  const byId = new Map(map.nodes.map((n) => [n.id, { ...n, kids: [] }]));
  let root = null;
  for (const n of byId.values()) {
    if (n.parent && byId.has(n.parent)) byId.get(n.parent).kids.push(n);
    else root ||= n;
  }
  if (!root) return null;
  const tree = d3.hierarchy(root, (d) => (expanded.has(d.id) && d.kids.length ? d.kids : null));
  d3.tree().nodeSize([ROW, COLUMN]).separation((a, b) => (a.parent === b.parent ? 1 : 1.25))(tree);
  const points = new Map();
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  tree.each((d) => {
    const width = textWidth(short(d.data.kind === 'concepts' ? concepts : d.data.label), !d.parent) + 16;
    const point = { node: d.data, x: d.y, y: d.x, width, parent: d.parent?.data.id, open: !!d.children, hasKids: d.data.kids.length > 0 };
    points.set(d.data.id, point);
    x0 = Math.min(x0, point.x - 12); x1 = Math.max(x1, point.x + 14 + width);
    y0 = Math.min(y0, point.y - 14); y1 = Math.max(y1, point.y + 14);
  });
  const shown = (id) => {
    let at = byId.get(id);
    while (at && !points.has(at.id)) at = byId.get(at.parent);
    return at?.id;
  };
  const links = new Map(); // several targets folded into one ancestor: one link to it
  for (const link of map.links) {
    const target = shown(link.target);
    if (points.has(link.source) && target) links.set(`${link.source}>${target}`, { source: link.source, target });
  }
  const bounds = { x: x0 - PAD, y: y0 - PAD, width: x1 - x0 + 2 * PAD, height: y1 - y0 + 2 * PAD };
  return { points, links: [...links.values()], bounds };
}

const edgePath = (a, b) => {
  const from = a.x + 12 + a.width;
  const to = b.x - 9;
  const mid = (from + to) / 2;
  return `M${from},${a.y} C${mid},${a.y} ${mid},${b.y} ${to},${b.y}`;
};

const linkPath = (a, b) => {
  const bend = Math.max(60, Math.abs(a.y - b.y) / 3);
  return `M${a.x - 9},${a.y} C${a.x - bend},${a.y} ${b.x - bend},${b.y} ${b.x - 9},${b.y}`;
};

const onKeys = (action) => (e) => {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    action();
  }
};

export function MapCanvas({ laid, selected, onSelect, onToggle, svgRef, t, label }) {
  const [view, setView] = useState({ k: 1, x: PAD, y: PAD });
  const pointers = useRef(new Map());
  const gesture = useRef({ moved: false, travel: 0 });
  const fitted = useRef(false);

  const size = () => svgRef.current?.getBoundingClientRect() || { width: 800, height: 500, left: 0, top: 0 };
  const fit = () => {
    if (!laid) return;
    const { width, height } = size();
    const b = laid.bounds;
    const k = Math.min(MAX_K, Math.max(MIN_FIT, Math.min(width / b.width, height / b.height, 1.1)));
    const x = (width - b.width * k) / 2 - b.x * k;
    // Too tall to show whole at a readable size: the top (the root's first branches) comes first.
    const y = b.height * k > height ? -b.y * k : (height - b.height * k) / 2 - b.y * k;
    setView({ k, x: b.width * k > width ? -b.x * k : x, y });
  };
  useEffect(() => {
    if (laid && !fitted.current) { // once per map: the screen gives each map its own canvas (key)
      fitted.current = true;
      fit();
    }
  }, [laid]);

  const zoomAt = (px, py, factor) =>
    setView((v) => {
      const k = Math.min(MAX_K, Math.max(MIN_K, v.k * factor));
      return { k, x: px - ((px - v.x) * k) / v.k, y: py - ((py - v.y) * k) / v.k };
    });
  const zoomCentre = (factor) => {
    const { width, height } = size();
    zoomAt(width / 2, height / 2, factor);
  };
  const pan = (dx, dy) => setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));

  const down = (e) => {
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.current.size === 1) gesture.current = { moved: false, travel: 0 };
  };
  const move = (e) => {
    const before = pointers.current.get(e.pointerId);
    if (!before) return;
    const now = { x: e.clientX, y: e.clientY };
    pointers.current.set(e.pointerId, now);
    const g = gesture.current;
    if (pointers.current.size === 2) {
      const [other] = [...pointers.current.entries()].filter(([id]) => id !== e.pointerId).map(([, p]) => p);
      const apart = (p) => Math.hypot(p.x - other.x, p.y - other.y) || 1;
      const box = size();
      zoomAt((now.x + other.x) / 2 - box.left, (now.y + other.y) / 2 - box.top, apart(now) / apart(before));
      g.moved = true;
    } else {
      g.travel += Math.abs(now.x - before.x) + Math.abs(now.y - before.y);
      if (g.travel < 5) return; // a tap or a click, not a drag
      if (!g.moved) {
        try {
          svgRef.current?.setPointerCapture(e.pointerId); // the drag goes on outside the map
        } catch {
          // a pointer the browser does not track (a synthetic event): the drag works without capture
        }
      }
      g.moved = true;
      pan(now.x - before.x, now.y - before.y);
    }
  };
  const up = (e) => pointers.current.delete(e.pointerId);
  const wheel = (e) => {
    e.preventDefault();
    const box = size();
    zoomAt(e.clientX - box.left, e.clientY - box.top, Math.exp(-e.deltaY * 0.0015));
  };
  const keys = (e) => {
    if (e.target !== e.currentTarget) return;
    const step = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] }[e.key];
    if (step) pan(...step);
    else if (e.key === '+' || e.key === '=') zoomCentre(1.25);
    else if (e.key === '-') zoomCentre(0.8);
    else if (e.key === '0') fit();
    else return;
    e.preventDefault();
  };
  // A click that ended a drag is the drag's, not the node's.
  const unlessDragged = (action) => () => !gesture.current.moved && action();

  const lit = useMemo(() => {
    if (!selected) return new Set();
    return new Set(laid?.links.filter((l) => l.source === selected || (selected === 'concepts' && laid.points.get(l.source)?.parent === 'concepts')).map((l) => `${l.source}>${l.target}`));
  }, [laid, selected]);

  if (!laid) return null;
  const points = [...laid.points.values()];
  return html`<div class="mm-frame">
    <div class="mm-tools row" role="group" aria-label=${t('map.zoom')}>
      <button type="button" onClick=${() => zoomCentre(1.25)} aria-label=${t('map.zoomIn')}>+</button>
      <button type="button" onClick=${() => zoomCentre(0.8)} aria-label=${t('map.zoomOut')}>−</button>
      <button type="button" onClick=${fit}>${t('map.fit')}</button>
    </div>
    <svg ref=${svgRef} class="mm-svg" role="group" aria-label=${label} aria-describedby="mm-keys" tabindex="0"
      onPointerDown=${down} onPointerMove=${move} onPointerUp=${up} onPointerCancel=${up} onWheel=${wheel} onKeyDown=${keys}>
      <g data-viewport="" transform=${`translate(${view.x},${view.y}) scale(${view.k})`} font-family=${FONT.slice(5)}>
        ${points.filter((p) => p.parent).map((p) => html`<path key=${`e-${p.node.id}`} d=${edgePath(laid.points.get(p.parent), p)} fill="none" stroke="#9ca3af" stroke-width="1.5" />`)}
        ${laid.links.filter((l) => lit.has(`${l.source}>${l.target}`)).map((l) => html`<path key=${`l-${l.source}-${l.target}`}
          d=${linkPath(laid.points.get(l.source), laid.points.get(l.target))} fill="none" stroke="#b45309" stroke-width="2" stroke-dasharray="6 4" />`)}
        ${points.map((p) => html`<${MapNode} key=${p.node.id} point=${p} selected=${selected === p.node.id} t=${t}
          onSelect=${unlessDragged(() => onSelect(p.node.id))} onToggle=${unlessDragged(() => onToggle(p.node.id))} />`)}
      </g>
    </svg>
    <p id="mm-keys" class="hint">${t('map.keys')}</p>
  </div>`;
}

function MapNode({ point, selected, onSelect, onToggle, t }) {
  const { node, x, y, width, open, hasKids } = point;
  const colour = COLOURS[node.kind] || COLOURS.section;
  const name = node.kind === 'concepts' ? t('map.concepts') : node.label;
  const cut = cutLabel(name); // its "…" is not read: what shows is part of the button's name
  return html`<g transform=${`translate(${x},${y})`} data-node=${node.id}>
    ${hasKids
      ? html`<g class="mm-toggle" role="button" tabindex="0" aria-expanded=${open ? 'true' : 'false'}
          aria-label=${t(open ? 'map.collapse' : 'map.expand', { label: name })} onClick=${onToggle} onKeyDown=${onKeys(onToggle)}>
          <circle r="8" fill="#ffffff" stroke=${colour} stroke-width="1.5" />
          <path d=${open ? 'M-4,0 H4' : 'M-4,0 H4 M0,-4 V4'} stroke=${colour} stroke-width="1.8" />
        </g>`
      : html`<circle r="4" fill=${colour} />`}
    <g class="mm-label" role="button" tabindex="0" aria-pressed=${selected ? 'true' : 'false'}
      aria-label=${`${name} (${t('map.passageCount', { n: node.chunk_count })})`} onClick=${onSelect} onKeyDown=${onKeys(onSelect)}
      transform="translate(12,0)">
      <rect x="0" y="-12" width=${width} height="24" rx="7" fill=${selected ? '#dbeafe' : node.kind === 'concept' ? '#fffbeb' : '#ffffff'}
        stroke=${colour} stroke-width=${selected ? 2.5 : 1} />
      <text x="7" y="4.5" font-size="13" fill="#111827" font-weight=${node.parent ? 400 : 700}>${cut}${cut !== name && html`<tspan aria-hidden="true">…</tspan>`}</text>
      <title>${name}</title>
    </g>
  </g>`;
}

// The map as a standalone SVG file: what is open now, whole (not the viewport), on white.
export function svgText(svg, laid) {
  const clone = svg.cloneNode(true);
  const { x, y, width, height } = laid.bounds;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('viewBox', `${x} ${y} ${width} ${height}`);
  clone.setAttribute('width', Math.ceil(width));
  clone.setAttribute('height', Math.ceil(height));
  for (const name of ['class', 'role', 'tabindex', 'aria-label', 'aria-describedby']) clone.removeAttribute(name);
  clone.querySelectorAll('[role], [tabindex], [aria-label], [aria-pressed], [aria-expanded], [class]').forEach((el) => {
    for (const name of ['role', 'tabindex', 'aria-label', 'aria-pressed', 'aria-expanded', 'class']) el.removeAttribute(name);
  });
  const viewport = clone.querySelector('[data-viewport]');
  viewport.removeAttribute('transform');
  const paper = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  for (const [name, value] of Object.entries({ x, y, width, height, fill: '#ffffff' })) paper.setAttribute(name, value);
  clone.insertBefore(paper, viewport);
  return new XMLSerializer().serializeToString(clone);
}

// The same drawn on a canvas at twice the size (at most 8000 px a side).
export async function pngBlob(text, laid) {
  const { width, height } = laid.bounds;
  const scale = Math.min(2, 8000 / Math.max(width, height));
  const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.ceil(width * scale);
    canvas.height = Math.ceil(height * scale);
    const context = canvas.getContext('2d');
    context.scale(scale, scale);
    context.drawImage(image, 0, 0, width, height);
    return await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

export function saveFile(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}
