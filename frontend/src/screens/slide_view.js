// A deck's cited slide drawn as it is laid out (issue 42): its text boxes and pictures where the slide puts
// them, the text at the slide's own sizes (scaled with its width: cqw), the shapes holding the passage
// outlined. The server lays the slide out from the stored version (GET .../slides/{n}); the slide's text
// stays below it for reading, searching and screen readers, so the drawing itself is hidden from them.
import { html, useEffect, useState } from '../lib.js';
import { useApp } from '../context.js';
import { words } from './pdf_page.js';

const percent = (value) => `${(value * 100).toFixed(3)}%`;

// Whether a shape's text is part of the passage: three words running as the passage's do (or all of a
// shorter text).
export function holdsPassage(shapeText, passage) {
  const mine = words(shapeText);
  const wanted = words(passage);
  if (!mine.length || !wanted.length) return false;
  const theirs = ` ${wanted.join(' ')} `;
  const n = Math.min(3, mine.length, wanted.length);
  for (let i = 0; i + n <= mine.length; i++) if (theirs.includes(` ${mine.slice(i, i + n).join(' ')} `)) return true;
  return false;
}

function Picture({ shape }) {
  const [url, setUrl] = useState(null);
  useEffect(() => {
    if (!shape.data) return undefined;
    const bytes = Uint8Array.from(atob(shape.data), (c) => c.charCodeAt(0));
    const made = URL.createObjectURL(new Blob([bytes], { type: shape.media_type }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [shape.data]);
  return url ? html`<img class="slide-picture" src=${url} alt="" />` : html`<div class="slide-picture-frame"></div>`;
}

// `onDrawn`: called once the drawing has taken its place (the page above the passage grew).
export function SlideView({ params, slide, passage, onDrawn }) {
  const { api, t } = useApp();
  const [layout, setLayout] = useState(null);
  const [failed, setFailed] = useState(null);
  useEffect(() => {
    let gone = false;
    setLayout(null);
    setFailed(null);
    api.call('versionSlide', { ...params, slide }).then((answer) => !gone && setLayout(answer), (e) => !gone && setFailed(e));
    return () => {
      gone = true;
    };
  }, [params.document_id, params.version, slide]);
  useEffect(() => {
    if (layout || failed) onDrawn?.();
  }, [layout, failed]);
  if (failed) return html`<p class="meta">${t('slideNotDrawn', { reason: failed.message || String(failed) })}</p>`;
  // Until the layout comes, a blank slide of the common 16:9 holds its place: the passage below, already
  // scrolled into view, moves little when the drawing arrives.
  if (!layout) return html`<div class="slide-render loading" aria-hidden="true" style=${{ aspectRatio: '1.7778' }}></div>`;
  return html`<div class="slide-render" aria-hidden="true" style=${{ aspectRatio: String(layout.aspect) }}>
    ${layout.shapes.map((shape) => {
      const text = shape.paragraphs.map((p) => p.text).join(' ');
      const cited = shape.kind !== 'picture' && passage && holdsPassage(text, passage);
      const place = { left: percent(shape.x0), top: percent(shape.y0), width: percent(shape.x1 - shape.x0), height: percent(shape.y1 - shape.y0) };
      return html`<div class=${`slide-shape ${shape.kind}${cited ? ' cited' : ''}`} style=${place}>
        ${shape.kind === 'picture'
          ? html`<${Picture} shape=${shape} />`
          : shape.paragraphs.map((p) => html`<p class=${p.bullet ? 'bullet' : ''}
              style=${{ fontSize: `${(p.size * 100).toFixed(3)}cqw`, fontWeight: p.bold ? '700' : null, marginLeft: `${p.level * 4}cqw` }}>${p.text}</p>`)}
      </div>`;
    })}
  </div>`;
}
