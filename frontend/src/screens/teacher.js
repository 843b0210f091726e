// The teacher's view (owners and editors curate; owners alone see the class): the review queue of
// generated items (approve, edit, reject), the owners' provisional grades to confirm or correct
// (grades.js), class mastery per topic, groundedness evaluations over time, and flagged answers (each
// with its confidence label where the row carries one).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { BarChart, LineChart } from '../charts.js';
import { Busy, ConfidenceBadge, Empty, ErrorNote, ListState, formatDate, sectionLabel, useAction, useAsync } from '../ui.js';
import { GradeReview } from './grades.js';

export function Teacher() {
  const { t, owner, api } = useApp();
  return html`<section aria-labelledby="teacher-title">
    <h2 id="teacher-title">${t('tab.teacher')}</h2>
    <${ReviewQueue} />
    ${owner && api.has('provisionalAttempts') && html`<${GradeReview} />`}
    ${owner && api.has('classMastery') && html`<${ClassMastery} />`}
    ${owner && html`<${Groundedness} />`}
    ${owner && html`<${Flagged} />`}
  </section>`;
}

function ReviewQueue() {
  const { api, t, projectId } = useApp();
  const curated = api.has('reviewQueue') && api.has('reviewQuestion'); // the study loop's review states
  const queue = useAsync(
    () => (curated
      ? api.call('reviewQueue', { project_id: projectId }, { query: { review_state: 'pending', limit: 200 } })
      : api.call('listQuestions', { project_id: projectId }, { query: { status: 'review', limit: 200 } })),
    [projectId],
  );
  const { run: decide, error } = useAction(async (q, approve) => {
    if (curated) {
      await api.call('reviewQuestion', { project_id: projectId, question_id: q.id }, { json: { action: approve ? 'approve' : 'reject' } });
    } else {
      await api.call('updateQuestion', { project_id: projectId, question_id: q.id }, { json: { status: approve ? 'active' : 'archived' } });
    }
    queue.setData(queue.data.filter((x) => x.id !== q.id));
  });
  return html`<section class="card" aria-labelledby="review-title">
    <h3 id="review-title">${t('reviewQueue')}</h3>
    <p class="meta">${curated ? t('reviewHelpPending') : t('reviewHelpLow')}</p>
    <${ListState} list=${queue} error=${error} empty=${t('reviewEmpty')} />
    <ul class="list review">
      ${(queue.data || []).map((q) => html`<${ReviewItem} key=${q.id} question=${q} onDecide=${decide} onSaved=${queue.reload} />`)}
    </ul>
  </section>`;
}

function ReviewItem({ question: q, onDecide, onSaved }) {
  const { api, t, projectId } = useApp();
  const editable = api.has('updateQuestion', 'question');
  const card = q.type === 'flashcard'; // a flashcard's question and answer are its front and back
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState({ question: q.question, answer: q.answer || '', explanation: q.explanation || '' });
  // Only what the teacher changed: an item without a reference answer (or explanation) keeps it unset
  // rather than being sent an empty one, which the server refuses.
  const { submit: save, error } = useAction(async () => {
    const changes = Object.fromEntries(Object.entries(draft).filter(([name, value]) => value !== (q[name] || '')));
    if (Object.keys(changes).length) {
      await api.call('updateQuestion', { project_id: projectId, question_id: q.id }, { json: changes });
      onSaved();
    }
    setEditing(false);
  });
  const field = (name, label, rows) => html`<label for=${`${name}-${q.id}`}>${label}</label>
    <textarea id=${`${name}-${q.id}`} rows=${rows} value=${draft[name]} onInput=${(e) => setDraft({ ...draft, [name]: e.target.value })}></textarea>`;
  return html`<li class="review-item" data-question=${q.id}>
    <p class="meta">${t(`qtype.${q.type}`, {}, q.type)} · ${t('confidence')} ${Math.round(q.confidence * 100)}%${q.flag ? ` · ${t(`flag.${q.flag}`, {}, q.flag)}` : ''}${q.section_path?.length ? ` · ${sectionLabel(q.section_path)}` : ''}</p>
    ${editing
      ? html`<form onSubmit=${save}>${field('question', card ? t('cardFront') : t('question'), 2)}${field('answer', card ? t('cardBack') : t('referenceAnswer'), 3)}${field('explanation', t('explanation'), 2)}
          <${ErrorNote} error=${error} />
          <div class="row"><button type="submit" class="primary">${t('save')}</button><button type="button" onClick=${() => setEditing(false)}>${t('cancel')}</button></div>
        </form>`
      : html`<p class="question"><strong>${q.question}</strong></p>
        ${q.answer && html`<p><span class="meta">${card ? t('cardBack') : t('referenceAnswer')}:</span> ${q.answer}</p>`}
        ${q.distractors?.length > 0 && html`<p><span class="meta">${t('distractors')}:</span> ${q.distractors.join(' · ')}</p>`}
        <div class="row">
          <button type="button" class="primary" onClick=${() => onDecide(q, true)}>${t('approve')}</button>
          ${editable && html`<button type="button" onClick=${() => setEditing(true)}>${t('edit')}</button>`}
          <button type="button" class="danger" onClick=${() => onDecide(q, false)}>${t('reject')}</button>
        </div>`}
  </li>`;
}

function ClassMastery() {
  const { api, t, projectId } = useApp();
  const data = useAsync(() => api.call('classMastery', { project_id: projectId }), [projectId]);
  const topics = data.data?.topics || [];
  return html`<section class="card" aria-labelledby="class-title">
    <h3 id="class-title">${t('classMastery')}</h3>
    ${data.loading && !data.data && html`<${Busy} />`}
    <${ErrorNote} error=${data.error} />
    ${data.data && html`<p class="meta">${t('studentsCount', { n: data.data.students })}</p>`}
    ${data.data && !topics.length && html`<${Empty}>${t('noMastery')}<//>`}
    ${topics.length > 0 && html`<${BarChart} title=${t('meanMastery')}
      rows=${topics.map((tp) => ({ label: sectionLabel(tp.topic) || t('noSection'), value: tp.mean_mastery, note: `${t('studentsStudied', { n: tp.students_studied })} · ${t('masteryBands', { h: tp.histogram.join(' / ') })}` }))} />`}
    ${topics.some((tp) => tp.most_failed?.length) && html`<h4>${t('mostFailed')}</h4>
      <ul class="list">${topics.flatMap((tp) => tp.most_failed).map((f) => html`<li key=${f.question_id}>${f.question} <span class="meta">${f.failures}/${f.attempts}</span></li>`)}</ul>`}
  </section>`;
}

function Groundedness() {
  const { api, t, projectId } = useApp();
  const data = useAsync(() => api.call('evaluations', { project_id: projectId }, { query: { limit: 500 } }), [projectId]);
  const summary = data.data?.summary;
  const points = (data.data?.evaluations || []).map((e) => ({ x: new Date(e.created_at), y: e.groundedness, flagged: e.flagged, label: e.question }));
  return html`<section class="card" aria-labelledby="ground-title">
    <h3 id="ground-title">${t('groundedness')}</h3>
    ${data.loading && !data.data && html`<${Busy} />`}
    <${ErrorNote} error=${data.error} />
    ${summary && html`<p class="meta">${t('evalSummary', {
      n: summary.count,
      mean: summary.mean_groundedness === null ? '—' : `${Math.round(summary.mean_groundedness * 100)}%`,
      flagged: summary.flagged_share === null ? '—' : `${Math.round(summary.flagged_share * 100)}%`,
    })}</p>`}
    ${data.data && !points.length && html`<${Empty}>${t('noEvaluations')}<//>`}
    ${points.length > 0 && html`<${LineChart} title=${t('groundednessOverTime')} points=${points} yLabel=${t('mean')} dateLabel=${t('data')} />`}
  </section>`;
}

function Flagged() {
  const { api, t, lang, projectId } = useApp();
  const data = useAsync(() => api.call('evaluations', { project_id: projectId }, { query: { flagged: true, limit: 100 } }), [projectId]);
  const items = data.data?.evaluations || [];
  return html`<section class="card" aria-labelledby="flagged-title">
    <h3 id="flagged-title">${t('flaggedAnswers')}</h3>
    <${ErrorNote} error=${data.error} />
    ${data.data && !items.length && html`<${Empty}>${t('noFlagged')}<//>`}
    <ul class="list flagged">
      ${items.map((e) => html`<li key=${e.id}>
        <p><strong>${e.question}</strong></p>
        <p>${e.answer}</p>
        <p class="meta">${e.confidence && html`<${ConfidenceBadge} confidence=${e.confidence} /> `}${t('groundedness')} ${Math.round(e.groundedness * 100)}% · ${t('risk')} ${Math.round(e.hallucination_risk * 100)}% · ${formatDate(e.created_at, lang)}</p>
        <ul class="claims">${e.claims.map((c, i) => html`<li key=${i} class=${c.supported ? 'supported' : 'unsupported'}>
          <span class="visually-hidden">${c.supported ? t('supported') : t('unsupported')}: </span>${c.supported ? '✓' : '✗'} ${c.claim}</li>`)}</ul>
      </li>`)}
    </ul>
  </section>`;
}
