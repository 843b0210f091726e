// Small shared pieces: loading state, errors, progress, dates, citation chips and the passage panel.
import { html, useCallback, useEffect, useRef, useState } from './lib.js';
import { useApp } from './context.js';
import { href } from './router.js';
import { Markdown } from './markdown.js';

// Runs `load` (an async function of the api) when `deps` change; `reload` runs it again.
export function useAsync(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const serial = useRef(0);
  const run = useCallback(async () => {
    const mine = ++serial.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    try {
      const data = await load();
      if (mine === serial.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === serial.current) setState((s) => ({ ...s, error, loading: false }));
    }
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run, setData: (data) => setState((s) => ({ ...s, data })) };
}

// Busy and error state around one async action (a form's submit, a button's click); the error stays for
// ErrorNote until the next run. With `keepBusy`, success leaves it busy: the screen moves on, and the
// action must not run twice meanwhile. `submit` runs it from a form's onSubmit, without the page load.
export function useAction(action, { keepBusy = false } = {}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (...args) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
      if (!keepBusy) setBusy(false);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const submit = (e) => {
    e.preventDefault();
    return run();
  };
  return { run, submit, busy, error };
}

export function ErrorNote({ error }) {
  const { t } = useApp();
  if (!error) return null;
  const retry = error.retryAfter ? ` ${t('retryAfter', { s: error.retryAfter })}` : '';
  return html`<p class="error" role="alert">${error.message || String(error)}${retry}</p>`;
}

export function Busy({ label }) {
  const { t } = useApp();
  return html`<p class="busy" role="status"><span class="spinner" aria-hidden="true"></span>${label || t('loading')}</p>`;
}

export function Empty({ children }) {
  return html`<p class="empty">${children}</p>`;
}

// What a list loaded by useAsync says besides its rows: busy while it first loads, its error (or `error`,
// an action's on it), and `empty` where it loaded none.
export function ListState({ list, error, empty }) {
  return html`${list.loading && !list.data && html`<${Busy} />`}
    <${ErrorNote} error=${list.error || error} />
    ${list.data && !list.data.length && html`<${Empty}>${empty}<//>`}`;
}

// Previous and next for a list read a page at a time from `offset`: next while the page came back full.
export function Pager({ offset, page, count, onOffset }) {
  const { t } = useApp();
  return html`<div class="row">
    ${offset > 0 && html`<button type="button" onClick=${() => onOffset(Math.max(0, offset - page))}>${t('previous')}</button>`}
    ${count === page && html`<button type="button" onClick=${() => onOffset(offset + page)}>${t('next')}</button>`}
  </div>`;
}

export function Bar({ value, label }) {
  const percent = Math.round(Math.max(0, Math.min(1, value || 0)) * 100);
  return html`<span class="bar" role="img" aria-label=${`${label ? `${label}: ` : ''}${percent}%`}>
    <span class="bar-fill" style=${{ width: `${percent}%` }}></span>
  </span>`;
}

export function formatDate(value, lang) {
  if (!value) return '';
  return new Date(value).toLocaleString(lang === 'pt' ? 'pt-BR' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

// "page 3" / "pages 3–4" for a PDF, "slide 7" / "slides 7–8" for a deck (`location` of the citation).
export function pagesLabel(t, start, end, location) {
  if (start === null || start === undefined) return '';
  const [one, many] = location === 'slide' ? ['slide', 'slides'] : ['page', 'pages'];
  return end && end !== start ? t(many, { a: start, b: end }) : t(one, { a: start });
}

export function sectionLabel(path) {
  return (path || []).join(' › ');
}

export function CitationChips({ citations, onOpen, label }) {
  const { t } = useApp();
  if (!citations?.length) return null;
  return html`<ul class="chips" aria-label=${label || t('sources')}>
    ${citations.map(
      (c, i) => html`<li key=${`${c.chunk_id}-${i}`}>
        <button type="button" class="chip" onClick=${() => onOpen(c)} title=${c.excerpt || ''}>
          <span class="chip-n">${i + 1}</span> ${c.document_title}${c.section_path?.length ? ` · ${c.section_path.at(-1)}` : ''}${c.page_start ? ` · ${pagesLabel(t, c.page_start, c.page_end, c.location)}` : ''}
        </button>
      </li>`,
    )}
  </ul>`;
}

const chunkCache = new Map(); // document id -> Promise of its chunks (this tab only)

export function documentChunks(api, projectId, documentId) {
  const key = `${projectId}/${documentId}`;
  if (!chunkCache.has(key)) {
    const loading = api.all('listChunks', { project_id: projectId, document_id: documentId }, { pageSize: 1000 });
    loading.catch(() => chunkCache.delete(key));
    chunkCache.set(key, loading);
  }
  return chunkCache.get(key);
}

// Where a citation opens (screens/viewer.js): the stored version it names, at its page or slide, with its
// characters to highlight. A citation stored before citations named their version takes it from its chunk
// while that chunk is live; with neither there is no telling which version it read, and no link.
export function citedSpotHref(projectId, ref, chunk) {
  const live = chunk && chunk.id === ref.chunk_id ? chunk : null;
  const version = ref.document_version ?? live?.document_version;
  if (!version || !ref.document_id) return null;
  const from = ref.char_start ?? live?.char_start;
  const to = ref.char_end ?? live?.char_end;
  const query = new URLSearchParams();
  if (ref.page_start) query.set('page', ref.page_start);
  if (from !== undefined && from !== null && to !== undefined && to !== null) {
    query.set('from', from);
    query.set('to', to);
  }
  return `${href('p', projectId, 'doc', ref.document_id, 'v', version)}?${query}`;
}

// The passage's text, for the viewer to highlight a PDF's older version whose chunks are gone (this tab).
export const SPOT_TEXT = 'studyai.spot';

// The cited passage beside the answer: document, section, pages, and the chunk's whole text.
export function PassagePanel({ citation, onClose }) {
  const { api, t, projectId } = useApp();
  const heading = useRef(null);
  const [chunk, setChunk] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    heading.current?.focus();
    setChunk(null);
    setError(null);
    documentChunks(api, projectId, citation.document_id)
      .then((rows) => setChunk(rows.find((row) => row.id === citation.chunk_id) || null))
      .catch(setError);
  }, [citation]);
  const onKey = (e) => e.key === 'Escape' && onClose();
  const spot = citedSpotHref(projectId, citation, chunk);
  const remember = () => sessionStorage.setItem(SPOT_TEXT, JSON.stringify({ spot, text: chunk?.text || citation.excerpt || '' }));
  return html`<aside class="passage" aria-labelledby="passage-title" onKeyDown=${onKey}>
    <div class="passage-head">
      <h2 id="passage-title" tabindex="-1" ref=${heading}>${citation.document_title}</h2>
      <button type="button" class="icon" onClick=${onClose} aria-label=${t('close')}>×</button>
    </div>
    <p class="meta">
      ${sectionLabel(citation.section_path) || t('noSection')}
      ${citation.page_start ? html` · ${pagesLabel(t, citation.page_start, citation.page_end, citation.location)}` : ''}
    </p>
    <${ErrorNote} error=${error} />
    <blockquote class="passage-text"><${Markdown} quote text=${chunk ? chunk.text : citation.excerpt} highlight=${citation.highlight || ''} /></blockquote>
    ${spot && html`<p><a class="button" href=${spot} onClick=${remember}>${t('openInFile')}</a></p>`}
  </aside>`;
}

// Polls while `active`: `read` (async) now and again `interval` ms after each answer, which goes to
// `onState`; a true from it is the end. An error goes to `onError` and ends it too. Starts afresh when
// `deps` change; stops when the component goes.
export function usePoll(active, read, { onState, onError, interval }, deps) {
  useEffect(() => {
    if (!active) return undefined;
    let stopped = false;
    let timer;
    const tick = async () => {
      try {
        const state = await read();
        if (stopped || onState(state)) return;
      } catch (e) {
        if (!stopped) onError(e);
        return;
      }
      timer = setTimeout(tick, interval);
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
}

// Polls a job until it ends; answers its latest state as it goes.
export function useJob(name, params, { interval = 500, onEnd } = {}) {
  const { api } = useApp();
  const [job, setJob] = useState(null);
  const [error, setError] = useState(null);
  const onState = (state) => {
    setJob(state);
    const ended = state.status === 'succeeded' || state.status === 'failed';
    if (ended) onEnd?.(state);
    return ended;
  };
  usePoll(Boolean(params), () => api.call(name, params), { onState, onError: setError, interval }, [JSON.stringify(params)]);
  return { job, error };
}

export function JobProgress({ job }) {
  const { t } = useApp();
  if (!job) return null;
  const counted = job.total > 0;
  const text = `${t(`stage.${job.stage}`, {}, job.stage)}${counted ? ` ${job.done}/${job.total}` : ''}`;
  return html`<div class="job" role="status" aria-live="polite">
    <span class="job-stage">${text}</span>
    ${job.status === 'failed'
      ? html`<span class="error">${job.error}</span>`
      : html`<progress max=${counted ? job.total : undefined} value=${counted ? job.done : undefined} aria-label=${text}></progress>`}
  </div>`;
}

// An answer's confidence label (core/confidence): in words, the colour only repeats them.
export function ConfidenceBadge({ confidence }) {
  const { t } = useApp();
  if (!confidence?.label) return null;
  const { label, p } = confidence;
  const title = typeof p === 'number' ? `${Math.round(p * 100)}%` : undefined;
  return html`<span class=${`badge confidence-${label}`} data-confidence=${label} title=${title}>${t(`confidence.${label}`)}</span>`;
}

// Passages from the material, rendered as the book shows them (headings, code, formulas), each with its
// key sentence marked and where it is (document, section, pages); the document's name opens the whole
// passage beside the answer.
export function Passages({ passages, title, onOpen }) {
  const { t } = useApp();
  if (!passages?.length) return null;
  return html`<div class="evidence">
    ${title && html`<p class="evidence-title">${title}</p>`}
    <ul class="passages">
      ${passages.map((p, i) => html`<li key=${`${p.chunk_id}-${i}`} data-chunk=${p.chunk_id}>
        <blockquote><${Markdown} quote text=${p.text} highlight=${p.highlight} /></blockquote>
        <p class="meta">
          ${onOpen
            ? html`<button type="button" class="link" onClick=${() => onOpen({ ...p, excerpt: p.text })}>${p.document_title}</button>`
            : p.document_title}
          ${p.section_path?.length ? ` · ${sectionLabel(p.section_path)}` : ''}${p.page_start ? ` · ${pagesLabel(t, p.page_start, p.page_end, p.location)}` : ''}
        </p>
      </li>`)}
    </ul>
  </div>`;
}
