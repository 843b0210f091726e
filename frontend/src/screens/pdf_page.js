// A PDF's cited page, drawn by pdf.js (vendor/pdfjs, imported on first use: it is large and only this
// screen needs it) from the version's bytes, which the app fetches with its own credentials. The page's
// text layer (pdf.js's transparent, selectable spans) carries the highlight: the spans whose words run
// with the passage's. A scanned page has no text layer: the server reads its words by OCR and answers the
// passage's boxes, drawn over the page (page_boxes.js). Zoom: fit the width (the default, a phone's too),
// or in and out by steps; pages by buttons or by number.
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { Busy, ErrorNote } from '../ui.js';
import { PageBoxes, usePageHighlight } from './page_boxes.js';

const PDFJS = '../../vendor/pdfjs/pdf.min.mjs';
const PDFJS_WORKER = new URL('../../vendor/pdfjs/pdf.worker.min.mjs', import.meta.url).href;
const ZOOM_STEP = 1.25;
const ZOOM_MIN = 0.25;
const ZOOM_MAX = 5;

let pdfjs = null; // the module, imported once per tab
function loadPdfjs() {
  pdfjs ||= import(PDFJS).then((lib) => {
    lib.GlobalWorkerOptions.workerSrc = PDFJS_WORKER;
    return lib;
  });
  return pdfjs;
}

// Words as both texts give them: lower case, accents and punctuation dropped (pdf.js and the parser
// that cut the chunks read a PDF's text each their own way: ligatures, hyphens, spaces in headings).
export function words(text) {
  return (text || '').normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
}

// Which of the page's text items to highlight: those holding runs of words (six at least) that go, three
// at a time, as the passage's do; gaps of a few words between such runs (a hyphenated word) are filled.
export function itemsToMark(items, passage) {
  const wanted = words(passage);
  const n = wanted.length >= 3 ? 3 : 1;
  if (!wanted.length) return new Set();
  const grams = new Set();
  for (let i = 0; i + n <= wanted.length; i++) grams.add(wanted.slice(i, i + n).join(' '));
  const page = [];
  items.forEach((text, index) => words(text).forEach((word) => page.push([word, index])));
  const hit = new Array(page.length).fill(false);
  for (let i = 0; i + n <= page.length; i++) {
    const gram = page.slice(i, i + n).map(([word]) => word).join(' ');
    if (grams.has(gram)) for (let k = i; k < i + n; k++) hit[k] = true;
  }
  // A run shorter than `least` words is chance ("the process of" in another paragraph, a running header).
  const least = Math.min(6, wanted.length);
  for (let i = 0; i < hit.length; ) {
    let j = i;
    while (j < hit.length && hit[j] === hit[i]) j++;
    if (hit[i] && j - i < least) hit.fill(false, i, j);
    i = j;
  }
  let last = -1;
  for (let i = 0; i < hit.length; i++) {
    if (!hit[i]) continue;
    if (last >= 0 && i - last <= 4) for (let k = last; k < i; k++) hit[k] = true;
    last = i;
  }
  return new Set(page.filter((_, i) => hit[i]).map(([, index]) => index));
}

export function PdfPage({ params, title, startPage, passage, from = null, to = null, quote = null }) {
  const { api, t } = useApp();
  const [pdf, setPdf] = useState(null);
  const [error, setError] = useState(null);
  const [page, setPage] = useState(startPage || 1);
  const [typed, setTyped] = useState(String(startPage || 1));
  const [zoom, setZoom] = useState(null); // null: fit the width
  const [width, setWidth] = useState(0);
  const [found, setFound] = useState(null); // 'text' or 'none' (not on this page), on a page with text
  const [scanned, setScanned] = useState(false); // the page has no text layer: its boxes come from OCR
  const frame = useRef(null);
  const sheet = useRef(null);
  const layer = useRef(null);
  const drawn = useRef(1); // the scale the page was last drawn at: zoom steps start from it

  useEffect(() => {
    let gone = false;
    let loaded = null;
    (async () => {
      const [lib, data] = await Promise.all([loadPdfjs(), api.bytes('versionFile', params)]);
      loaded = await lib.getDocument({ data }).promise;
      if (gone) loaded.destroy();
      else setPdf({ lib, doc: loaded });
    })().catch((e) => !gone && setError(e));
    return () => {
      gone = true;
      loaded?.destroy();
    };
  }, [params.document_id, params.version]);

  // Fit the width: follows the frame (a phone turned, a window resized).
  useEffect(() => {
    const measure = () => setWidth(frame.current?.clientWidth || 0);
    measure();
    const observer = new ResizeObserver(measure);
    if (frame.current) observer.observe(frame.current);
    return () => observer.disconnect();
  }, [pdf]);

  useEffect(() => {
    if (!pdf || !width) return undefined;
    let gone = false;
    let task = null;
    let textLayer = null;
    (async () => {
      const proxy = await pdf.doc.getPage(Math.min(Math.max(page, 1), pdf.doc.numPages));
      const natural = proxy.getViewport({ scale: 1 });
      const scale = zoom ?? Math.max(ZOOM_MIN, (width - 2) / natural.width);
      const viewport = proxy.getViewport({ scale });
      drawn.current = scale;
      const ratio = window.devicePixelRatio || 1;
      // A fresh canvas each time: pdf.js may hand one to its worker, and a handed one is never drawn again.
      const canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      canvas.style.width = `${Math.floor(viewport.width)}px`;
      canvas.style.height = `${Math.floor(viewport.height)}px`;
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', t('pageImage', { n: proxy.pageNumber, title }));
      task = proxy.render({ canvas, viewport, transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0] });
      await task.promise;
      if (gone) return;
      sheet.current.style.setProperty('--scale-factor', String(scale));
      sheet.current.querySelector('canvas')?.remove();
      sheet.current.prepend(canvas);
      const content = await proxy.getTextContent();
      if (gone) return;
      layer.current.replaceChildren();
      textLayer = new pdf.lib.TextLayer({ textContentSource: content, container: layer.current, viewport });
      await textLayer.render();
      if (gone) return;
      const strings = textLayer.textContentItemsStr;
      const noText = !strings.join('').trim();
      setScanned(noText);
      if (noText) return;
      const marked = itemsToMark(strings, passage);
      textLayer.textDivs.forEach((div, i) => marked.has(i) && div.classList.add('spot-hl'));
      const first = textLayer.textDivs.find((div) => div.classList.contains('spot-hl'));
      setFound(first ? 'text' : 'none');
      first?.scrollIntoView({ block: 'center' });
    })().catch((e) => !gone && e?.name !== 'RenderingCancelledException' && setError(e));
    return () => {
      gone = true;
      task?.cancel();
      textLayer?.cancel();
    };
  }, [pdf, page, zoom, width, passage]);

  const count = pdf?.doc.numPages || 0;
  const goTo = (n) => {
    const next = Math.min(Math.max(n, 1), count || 1);
    setPage(next);
    setTyped(String(next));
    setFound(null);
  };
  const zoomBy = (factor) => setZoom(Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, drawn.current * factor)));
  const onTyped = (e) => {
    e.preventDefault();
    const n = Number(typed);
    if (Number.isInteger(n)) goTo(n);
  };

  const highlight = usePageHighlight({ params, page, from, to, quote, active: scanned });
  const status = scanned ? highlight.state : found;
  return html`<div class=${`spot-pdf${scanned ? ' scan' : ''}`}>
    <div class="spot-tools" role="toolbar" aria-label=${t('spotControls')}>
      <button type="button" onClick=${() => goTo(page - 1)} disabled=${page <= 1} aria-label=${t('prevPage')}>‹</button>
      <form class="spot-page-form" onSubmit=${onTyped}>
        <label for="spot-page">${t('spotPage')}</label>
        <input id="spot-page" type="number" inputmode="numeric" min="1" max=${count || undefined} value=${typed}
          onInput=${(e) => setTyped(e.target.value)} onChange=${onTyped} />
        <span>${count ? t('pageOf', { n: count }) : ''}</span>
      </form>
      <button type="button" onClick=${() => goTo(page + 1)} disabled=${!count || page >= count} aria-label=${t('nextPage')}>›</button>
      <button type="button" onClick=${() => zoomBy(1 / ZOOM_STEP)} aria-label=${t('zoomOut')}>−</button>
      <button type="button" onClick=${() => zoomBy(ZOOM_STEP)} aria-label=${t('zoomIn')}>+</button>
      <button type="button" onClick=${() => setZoom(null)} aria-pressed=${zoom === null}>${t('fitWidth')}</button>
      ${startPage && page !== startPage && html`<button type="button" class="link" onClick=${() => goTo(startPage)}>${t('citedPage')}</button>`}
    </div>
    <p class="meta spot-status" role="status" aria-live="polite">
      ${count ? t('pageNOf', { n: page, count }) : ''}${status ? ` · ${t(`spotFound.${status}`)}` : ''}
    </p>
    ${highlight.error && html`<p class="notice">${t('spotBeside', { reason: highlight.error.message || String(highlight.error) })}</p>`}
    <${ErrorNote} error=${error && new Error(t('spotPdfFailed', { reason: error.message || String(error) }))} />
    ${!pdf && !error && html`<${Busy} label=${t('spotLoadingFile')} />`}
    <div class="spot-frame" ref=${frame} tabindex="0">
      <div class="spot-sheet" ref=${sheet}>
        <div class="textLayer" ref=${layer}></div>
        ${scanned && html`<${PageBoxes} boxes=${highlight.boxes} />`}
      </div>
    </div>
  </div>`;
}
