// The cited spot (issue 42): a citation opens the stored version it names, never a newer one
// (#/p/<project>/doc/<document>/v/<version>?page=&from=&to=: the page or slide, and the passage's characters
// in that version's parsed text). A PDF is drawn at the cited page with the passage highlighted
// (pdf_page.js), a scanned page's by boxes from the server's OCR (page_boxes.js); a page image likewise, the
// passage beside it too; every other format is shown as the
// text of its cited section (a deck: its slide), the passage highlighted and scrolled into view.
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, hashQuery } from '../router.js';
import { Markdown } from '../markdown.js';
import { Busy, ErrorNote, SPOT_TEXT, pagesLabel, sectionLabel, useAsync } from '../ui.js';
import { PageBoxes, usePageHighlight } from './page_boxes.js';
import { PdfPage } from './pdf_page.js';
import { SlideView } from './slide_view.js';

const OPEN = '\uE000'; // private-use characters around the passage in the text, made <mark> once rendered
const CLOSE = '\uE001';
const BROWSER_IMAGES = /^image\/(png|jpeg)/; // a TIFF page image is not shown by browsers

const number = (value) => (value === null || value === '' || Number.isNaN(Number(value)) ? null : Number(value));

export function Viewer({ item: documentId, rest = [] }) {
  const { api, t, projectId } = useApp();
  const version = rest[0] === 'v' ? number(rest[1]) : null;
  const query = hashQuery();
  const page = number(query.get('page'));
  const from = number(query.get('from'));
  const to = number(query.get('to'));
  const params = { project_id: projectId, document_id: documentId, version };
  const spot = useAsync(
    () =>
      Number.isInteger(version) && version > 0
        ? api.call('versionText', params, { query: { char_start: from, char_end: to, page } })
        : Promise.reject(new Error(t('spotMissing'))),
    [documentId, version, from, to, page],
  );
  const latest = useAsync(() => api.call('getDocument', { project_id: projectId, document_id: documentId }), [documentId]);
  const heading = useRef(null);
  // preventScroll: the passage, scrolled into view below, stays there.
  useEffect(() => heading.current?.focus({ preventScroll: true }), [spot.data?.document_id]);

  const data = spot.data;
  const passageText = data?.passage?.text || handedText(location.hash);
  const newer = latest.data && data && latest.data.version > data.version;
  return html`<section class="spot" aria-labelledby="spot-title">
    <p class="spot-back"><button type="button" class="link" onClick=${() => (history.length > 1 ? history.back() : go('p', projectId, 'ask'))}>‹ ${t('spotBack')}</button></p>
    ${spot.loading && !data && html`<${Busy} />`}
    <${ErrorNote} error=${spot.error} />
    ${data && html`
      <h2 id="spot-title" tabindex="-1" ref=${heading}>${data.title}</h2>
      <p class="meta">
        ${t('spotVersion', { v: data.version })} · ${data.filename}
        ${data.passage?.page_start ? html` · ${pagesLabel(t, data.passage.page_start, data.passage.page_end, data.location)}` : ''}
        ${data.context?.path?.length ? html` · ${sectionLabel(data.context.path)}` : ''}
      </p>
      <${Download} params=${params} spot=${data} />
      ${newer && html`<p class="notice">${t('spotNewer', { v: data.version, latest: latest.data.version })}</p>`}
      <div class=${`spot-body shown-${data.shown_as}`}>
        ${data.shown_as === 'pdf' && html`<${PdfPage} params=${params} title=${data.title}
          startPage=${page || data.passage?.page_start || 1} passage=${passageText} from=${from} to=${to}
          quote=${data.passage?.text ? null : passageText} />`}
        ${data.shown_as === 'image' && html`<${PageImage} params=${params} spot=${data} from=${from} to=${to}
          quote=${data.passage?.text ? null : passageText} />`}
        ${data.shown_as === 'text' && html`<${SpotText} spot=${data} params=${params} />`}
        ${data.shown_as !== 'text' && html`<${PassageAside} spot=${data} text=${passageText} />`}
      </div>`}
  </section>`;
}

// The version's bytes saved under its own name (fetched with the app's credentials, as the viewer's are).
function Download({ params, spot }) {
  const { api, t } = useApp();
  const [error, setError] = useState(null);
  const save = async () => {
    try {
      const data = await api.bytes('versionFile', params);
      const url = URL.createObjectURL(new Blob([data], { type: spot.media_type }));
      const link = Object.assign(document.createElement('a'), { href: url, download: spot.filename });
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      setError(e);
    }
  };
  return html`<p class="spot-download"><button type="button" class="link" onClick=${save}>${t('spotDownload')}</button></p>
    <${ErrorNote} error=${error} />`;
}

// The passage's text the passage panel handed over for this very link (ui.js SPOT_TEXT): what highlights
// an older PDF version whose chunks a newer one replaced.
function handedText(hash) {
  try {
    const handed = JSON.parse(sessionStorage.getItem(SPOT_TEXT) || 'null');
    return handed && hash.endsWith(handed.spot) ? handed.text : '';
  } catch {
    return '';
  }
}

function PassageAside({ spot, text }) {
  const { t } = useApp();
  // tabindex: a long passage scrolls inside, and the keyboard must reach it.
  return html`<aside class="spot-passage" aria-labelledby="spot-passage-title" tabindex="0">
    <h3 id="spot-passage-title">${t('spotPassage')}</h3>
    ${text ? html`<blockquote class="passage-text">${text}</blockquote>` : html`<p class="meta">${t('spotNoText')}</p>`}
  </aside>`;
}

// A page image (PNG or JPEG) from the version's bytes, fetched with the app's credentials; the passage's
// boxes from the server's OCR of it over the image.
function PageImage({ params, spot, from, to, quote }) {
  const { api, t } = useApp();
  const [url, setUrl] = useState(null);
  const [error, setError] = useState(null);
  const [zoom, setZoom] = useState(1);
  const shown = BROWSER_IMAGES.test(spot.media_type);
  const highlight = usePageHighlight({ params, page: 1, from, to, quote, active: shown && Boolean(url) });
  useEffect(() => {
    if (!shown) return undefined;
    let made = null;
    api.bytes('versionFile', params).then((data) => {
      made = URL.createObjectURL(new Blob([data], { type: spot.media_type }));
      setUrl(made);
    }, setError);
    return () => made && URL.revokeObjectURL(made);
  }, [params.document_id, params.version]);
  if (!shown) return html`<p class="notice">${t('spotNoImage')}</p>`;
  return html`<div class="spot-pdf scan">
    <div class="spot-tools" role="toolbar" aria-label=${t('spotControls')}>
      <button type="button" onClick=${() => setZoom((z) => Math.max(0.5, z / 1.25))} aria-label=${t('zoomOut')}>−</button>
      <button type="button" onClick=${() => setZoom((z) => Math.min(4, z * 1.25))} aria-label=${t('zoomIn')}>+</button>
      <button type="button" onClick=${() => setZoom(1)} aria-pressed=${zoom === 1}>${t('fitWidth')}</button>
    </div>
    <p class="meta spot-status" role="status" aria-live="polite">${highlight.state ? t(`spotFound.${highlight.state}`) : ''}</p>
    ${highlight.error && html`<p class="notice">${t('spotBeside', { reason: highlight.error.message || String(highlight.error) })}</p>`}
    <${ErrorNote} error=${error} />
    ${!url && !error && html`<${Busy} label=${t('spotLoadingFile')} />`}
    <div class="spot-frame" tabindex="0">
      ${url && html`<div class="spot-photo" style=${{ width: `${zoom * 100}%` }}>
        <img class="spot-image" src=${url} alt=${t('pageImage', { n: 1, title: spot.title })} />
        <${PageBoxes} boxes=${highlight.boxes} />
      </div>`}
    </div>
  </div>`;
}

// The start of the passage moves past a line's Markdown marker (a heading's #, a list's -), so the marker
// still makes its heading or item; its end moves before trailing blanks.
export function withMarkers(text, start, end) {
  let a = Math.max(0, Math.min(start, text.length));
  let b = Math.max(a, Math.min(end, text.length));
  if (a === 0 || text[a - 1] === '\n') {
    const marker = /^(#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+|>[ \t]*)/.exec(text.slice(a, b));
    if (marker) a += marker[0].length;
  }
  while (b > a && /\s/.test(text[b - 1])) b--;
  return text.slice(0, a) + OPEN + text.slice(a, b) + CLOSE + text.slice(b);
}

// The rendered text between the markers, in <mark>s (one per text node: a passage spans paragraphs);
// the first one, or null.
function markBetween(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  let inside = false;
  let first = null;
  for (const node of nodes) {
    const parts = node.data.split(/([\uE000\uE001])/);
    if (parts.length === 1 && !inside) continue;
    const pieces = [];
    for (const part of parts) {
      if (part === OPEN || part === CLOSE) {
        inside = part === OPEN;
      } else if (part && inside && part.trim()) {
        const mark = document.createElement('mark');
        mark.className = 'spot-mark';
        mark.textContent = part;
        first ||= mark;
        pieces.push(mark);
      } else if (part) {
        pieces.push(document.createTextNode(part));
      }
    }
    node.replaceWith(...pieces);
  }
  return first;
}

// A format shown as text: the section (a deck: the slide) around the passage, from the version's parsed
// text, the passage highlighted and scrolled into view. Markdown for every format but plain text.
function SpotText({ spot, params }) {
  const { t } = useApp();
  const body = useRef(null);
  const [first, setFirst] = useState(null);
  const context = spot.context;
  const slide = spot.location === 'slide' ? context?.page : null;
  const passage = spot.passage;
  const inside = context && passage && passage.char_end > context.char_start && passage.char_start < context.char_end;
  const text = !context
    ? ''
    : inside
      ? withMarkers(context.text, passage.char_start - context.char_start, passage.char_end - context.char_start)
      : context.text;
  // The Markdown component renders the text (DOMPurify, math, code); the markers it keeps become <mark>s
  // here, again whenever it renders anew (a code highlighter or KaTeX loaded meanwhile).
  useEffect(() => {
    if (!body.current) return undefined;
    const mark = () => {
      if (!body.current.textContent.includes(OPEN)) return;
      const found = markBetween(body.current);
      found?.setAttribute('tabindex', '-1');
      found?.scrollIntoView({ block: 'center' });
      setFirst(found);
    };
    setFirst(null);
    mark();
    const observer = new MutationObserver(mark);
    observer.observe(body.current, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [text]);
  if (!context) return html`<p class="meta">${t('spotNoText')}</p>`;
  const toSlide = (n) => {
    const query = hashQuery();
    query.set('page', n);
    location.hash = `${location.hash.split('?')[0]}?${query}`;
  };
  // key: a new text gets new nodes (the marks replaced the text nodes Preact made).
  return html`<div class="spot-text-wrap">
    ${slide && html`<div class="spot-tools" role="toolbar" aria-label=${t('spotControls')}>
      <button type="button" onClick=${() => toSlide(slide - 1)} disabled=${slide <= 1} aria-label=${t('prevSlide')}>‹</button>
      <span>${t('slideNOf', { n: slide, count: spot.page_count || slide })}</span>
      <button type="button" onClick=${() => toSlide(slide + 1)} disabled=${spot.page_count && slide >= spot.page_count} aria-label=${t('nextSlide')}>›</button>
    </div>`}
    <p class="meta spot-status" role="status">
      ${first ? t('spotFound.text') : t('spotFound.none')}
      ${first && html` <button type="button" class="link" onClick=${() => { first.scrollIntoView({ block: 'center' }); first.focus(); }}>${t('goToPassage')}</button>`}
    </p>
    ${slide && html`<${SlideView} params=${params} slide=${slide} passage=${inside ? passage.text : ''}
      onDrawn=${() => first?.scrollIntoView({ block: 'center' })} />`}
    ${slide && html`<h3 class="spot-slide">${t('slideN', { n: slide })}</h3>`}
    <div ref=${body} key=${text}>
      ${spot.source_type === 'text'
        ? html`<div class="spot-text plain">${text}</div>`
        : html`<${Markdown} text=${text} className="spot-text markdown" />`}
    </div>
  </div>`;
}

