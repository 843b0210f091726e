// A cited passage drawn over a page that is an image (a scanned PDF page under pdf.js, a page photo): the
// browser has no text there to mark, so the API reads the page's words (OCR, as the index read them, kept
// after the first reader) and answers the boxes of the passage's lines as fractions of the page; they are
// laid over the drawn page at any zoom. Until they come, and where they cannot (OCR not on the server), the
// passage is still shown beside the page.
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';

// state: 'reading' (asked), 'ocr' (boxes found), 'none' (read, the passage is not on this page), 'scan'
// (the page could not be read here: the reason in `error`).
export function usePageHighlight({ params, page, from, to, quote, active }) {
  const { api } = useApp();
  const [found, setFound] = useState({ state: null, boxes: [], error: null });
  useEffect(() => {
    if (!active || !page) return undefined;
    let gone = false;
    setFound({ state: 'reading', boxes: [], error: null });
    const query = from !== null && to !== null ? { char_start: from, char_end: to } : {};
    if (quote) query.quote = quote.slice(0, 4000);
    api.call('pageHighlight', { ...params, page }, { query }).then(
      (answer) => !gone && setFound({ state: answer.boxes.length ? 'ocr' : 'none', boxes: answer.boxes, error: null }),
      (error) => !gone && setFound({ state: 'scan', boxes: [], error }),
    );
    return () => {
      gone = true;
    };
  }, [active, params.document_id, params.version, page, from, to, quote]);
  return found;
}

const percent = (value) => `${(value * 100).toFixed(3)}%`;

// The boxes over the page (its parent positioned, the page's size); the first scrolled into view once.
export function PageBoxes({ boxes }) {
  const first = useRef(null);
  useEffect(() => first.current?.scrollIntoView({ block: 'center' }), [boxes]);
  if (!boxes.length) return null;
  return html`<div class="spot-boxes" aria-hidden="true">
    ${boxes.map((box, i) => html`<div class="spot-box" ref=${i === 0 ? first : null}
      style=${{ left: percent(box.x0), top: percent(box.y0), width: percent(box.x1 - box.x0), height: percent(box.y1 - box.y0) }}></div>`)}
  </div>`;
}
