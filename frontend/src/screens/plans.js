// Plans and notes: ask for a plan on a topic (coverage per section, gaps), turn it into a note (a worker
// job, with its progress), and read notes with their citations. #/p/<id>/plans/<plan id> or /note-<doc>.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { Markdown } from '../markdown.js';
import {
  Bar, Busy, CitationChips, Empty, ErrorNote, JobProgress, PassagePanel, documentChunks, formatDate, useAction, useAsync,
  useJob,
} from '../ui.js';

export function Plans({ item }) {
  const [passage, setPassage] = useState(null);
  let body;
  if (item?.startsWith('note-')) body = html`<${NoteView} documentId=${item.slice(5)} onOpen=${setPassage} />`;
  else if (item) body = html`<${PlanView} planId=${item} onOpen=${setPassage} />`;
  else body = html`<${PlanIndex} />`;
  return html`<div class=${`with-side${passage ? ' open' : ''}`}>
    <div>${body}</div>
    ${passage && html`<${PassagePanel} citation=${passage} onClose=${() => setPassage(null)} />`}
  </div>`;
}

function PlanIndex() {
  const { api, t, lang, projectId, writer } = useApp();
  const plans = useAsync(() => api.call('listPlans', { project_id: projectId }, { query: { limit: 50 } }), [projectId]);
  const notes = useAsync(
    async () => (await api.all('listDocuments', { project_id: projectId }, { pageSize: 1000 })).filter((d) => d.kind === 'generated'),
    [projectId],
  );
  return html`<section aria-labelledby="plans-title">
    <h2 id="plans-title">${t('tab.plans')}</h2>
    <div class="grid two">
      <div>
        ${writer && html`<${NewPlan} />`}
        <h3>${t('plans')}</h3>
        ${plans.loading && !plans.data && html`<${Busy} />`}
        <${ErrorNote} error=${plans.error} />
        ${plans.data && !plans.data.length && html`<${Empty}>${t('noPlans')}<//>`}
        <ul class="list">
          ${(plans.data || []).map((p) => html`<li key=${p.id}>
            <a href=${href('p', projectId, 'plans', p.id)}>${p.topic || t('wholeProject')}</a>
            <span class="meta">${p.sections.length} ${t('sections')} · ${p.gaps.length} ${t('gaps')} · ${formatDate(p.created_at, lang)}</span>
          </li>`)}
        </ul>
      </div>
      <div>
        <h3>${t('notes')}</h3>
        <${ErrorNote} error=${notes.error} />
        ${notes.data && !notes.data.length && html`<${Empty}>${t('noNotes')}<//>`}
        <ul class="list">
          ${(notes.data || []).map((d) => html`<li key=${d.id}>
            <a href=${href('p', projectId, 'plans', `note-${d.id}`)}>${d.title}</a>
            <span class="meta">${t(`status.${d.status}`)} · ${formatDate(d.created_at, lang)}</span>
          </li>`)}
        </ul>
      </div>
    </div>
  </section>`;
}

function NewPlan() {
  const { api, t, projectId } = useApp();
  const [topic, setTopic] = useState('');
  const [sections, setSections] = useState(5);
  const { submit, busy, error } = useAction(async () => {
    const body = { max_sections: Number(sections), ...(topic.trim() ? { topic: topic.trim() } : {}) };
    const plan = await api.call('createPlan', { project_id: projectId }, { json: body });
    go('p', projectId, 'plans', plan.id);
  }, { keepBusy: true });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-plan">
    <h3 id="new-plan">${t('newPlan')}</h3>
    <label for="plan-topic">${t('topic')}</label>
    <input id="plan-topic" maxlength="300" value=${topic} onInput=${(e) => setTopic(e.target.value)} placeholder=${t('topicHint')} />
    <label for="plan-sections">${t('maxSections')}</label>
    <input id="plan-sections" type="number" min="1" max="8" value=${sections} onInput=${(e) => setSections(e.target.value)} />
    <${ErrorNote} error=${error} />
    ${busy ? html`<${Busy} label=${t('planning')} />` : html`<button type="submit" class="primary">${t('makePlan')}</button>`}
  </form>`;
}

function PlanView({ planId, onOpen }) {
  const { api, t, projectId, writer } = useApp();
  const plan = useAsync(() => api.call('getPlan', { project_id: projectId, plan_id: planId }), [planId]);
  const [note, setNote] = useState(null);
  const { run: write, error } = useAction(async () => {
    setNote(await api.call('writeNote', { project_id: projectId }, { json: { plan_id: planId } }));
  });
  const p = plan.data;
  return html`<section aria-labelledby="plan-title">
    <p><a href=${href('p', projectId, 'plans')}>← ${t('tab.plans')}</a></p>
    ${plan.loading && !p && html`<${Busy} />`}
    <${ErrorNote} error=${plan.error} />
    ${p && html`
      <h2 id="plan-title">${p.topic || t('wholeProject')}</h2>
      <p class="meta">${t('retrievedChunks', { n: p.retrieved })}</p>
      <ol class="sections">
        ${p.sections.map((s, i) => html`<li key=${i} class="card">
          <h3>${s.title}</h3>
          <p>${s.goal}</p>
          <p class="coverage"><span>${t('coverage')} ${Math.round(s.coverage * 100)}%</span> <${Bar} value=${s.coverage} label=${t('coverage')} />
            <span class="meta">${t('supportingChunks', { n: s.support })}</span></p>
          <${CitationChips} citations=${s.sources} onOpen=${onOpen} />
        </li>`)}
      </ol>
      ${p.gaps.length > 0 && html`<h3>${t('gaps')}</h3>
        <ul class="list gaps">${p.gaps.map((g, i) => html`<li key=${i}><strong>${g.title}</strong> — ${g.reason}
          <span class="meta"> (${t('coverage')} ${Math.round((g.coverage || 0) * 100)}%)</span></li>`)}</ul>`}
      ${writer && !note && html`<button type="button" class="primary" onClick=${write}>${t('writeNote')}</button>`}
      <${ErrorNote} error=${error} />
      ${note && html`<${NoteJob} jobId=${note.job_id} onOpen=${onOpen} />`}
    `}
  </section>`;
}

function NoteJob({ jobId, onOpen }) {
  const { t, projectId } = useApp();
  const { job, error } = useJob('getNoteJob', { project_id: projectId, job_id: jobId }, { interval: 1000 });
  return html`<div class="card">
    <h3>${t('note')}</h3>
    <${ErrorNote} error=${error} />
    ${job && job.status !== 'succeeded' && html`<${JobProgress} job=${job} />`}
    ${job?.status === 'succeeded' && html`<${NoteView} documentId=${job.document_id} jobId=${jobId} onOpen=${onOpen} embedded=${true} />`}
  </div>`;
}

// A note's Markdown: from GET /notes/{job}/markdown where the server has it, else put back together from
// its indexed chunks (each is a slice of the text; overlaps are skipped by their character ranges).
function NoteView({ documentId, jobId, onOpen, embedded }) {
  const { api, t, projectId } = useApp();
  const note = useAsync(async () => {
    const doc = await api.call('getDocument', { project_id: projectId, document_id: documentId });
    if (jobId && api.has('noteMarkdown')) {
      return { doc, text: await api.call('noteMarkdown', { project_id: projectId, job_id: jobId }) };
    }
    const chunks = [...(await documentChunks(api, projectId, documentId))].sort((a, b) => a.char_start - b.char_start);
    let text = '';
    let end = 0;
    for (const c of chunks) {
      if (c.char_start < end) text += c.text.slice(end - c.char_start);
      else text += (text ? '\n\n' : '') + c.text;
      end = Math.max(end, c.char_end);
    }
    return { doc, text, chunks };
  }, [documentId, jobId]);
  const d = note.data;
  return html`<article aria-labelledby="note-title">
    ${!embedded && html`<p><a href=${href('p', projectId, 'plans')}>← ${t('tab.plans')}</a></p>`}
    ${note.loading && !d && html`<${Busy} />`}
    <${ErrorNote} error=${note.error} />
    ${d && html`
      <h2 id="note-title">${d.doc.title}</h2>
      ${d.doc.status !== 'ready' && html`<p class="meta">${t(`status.${d.doc.status}`)}</p>`}
      ${!d.text && html`<${Empty}>${t('noteIndexing')}<//>`}
      <${Markdown} text=${d.text} className="markdown note" />
      ${d.chunks && html`<${NoteSources} chunks=${d.chunks} onOpen=${onOpen} />`}
    `}
  </article>`;
}

// The note's footnotes name the cited documents; its chunks are passages of the note itself, openable too.
function NoteSources({ chunks, onOpen }) {
  const { t } = useApp();
  const asCitation = (c) => ({
    chunk_id: c.id, document_id: c.document_id, document_title: c.context_header.split(' > ')[0],
    section_path: c.section_path, page_start: c.page_start, page_end: c.page_end, excerpt: c.text.slice(0, 300),
  });
  return html`<details class="note-sources"><summary>${t('notePassages')}</summary>
    <${CitationChips} citations=${chunks.map(asCitation)} onOpen=${onOpen} label=${t('notePassages')} />
  </details>`;
}
