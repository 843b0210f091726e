// Provisional grades (issue 28): the teacher's "Review grades" queue, where an owner confirms a grade the
// model was unsure of or corrects it (verdict, score); and the small pieces the student's screens use to
// say a grade is provisional or was checked. The API enforces who may review (owners; others 403/404).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { ErrorNote, ListState, formatDate, useAction, useAsync } from '../ui.js';

const VERDICTS = ['correct', 'partially_correct', 'incorrect'];

// What the student is told of a grade's standing: nothing for a settled grade.
export function GradeStatus({ status }) {
  const { t } = useApp();
  const text = { provisional: t('provisional'), confirmed: t('gradeConfirmed'), corrected: t('gradeCorrected') }[status];
  return text ? html`<p class=${`grade-status status-${status}`}><span class="badge">${text}</span></p>` : null;
}

export function GradeReview() {
  const { api, t, projectId } = useApp();
  const queue = useAsync(() => api.call('provisionalAttempts', { project_id: projectId }, { query: { limit: 200 } }), [projectId]);
  const done = (id) => queue.setData(queue.data.filter((a) => a.id !== id));
  return html`<section class="card" aria-labelledby="grades-title">
    <h3 id="grades-title">${t('reviewGrades')}</h3>
    <p class="meta">${t('reviewGradesHelp')}</p>
    <${ListState} list=${queue} empty=${t('noProvisional')} />
    <ul class="list review grades">
      ${(queue.data || []).map((a) => html`<${GradeItem} key=${a.id} attempt=${a} onDone=${done} />`)}
    </ul>
  </section>`;
}

function GradeItem({ attempt: a, onDone }) {
  const { api, t, lang, projectId } = useApp();
  const [verdict, setVerdict] = useState(a.model_verdict || a.verdict);
  const [score, setScore] = useState('');
  const send = async (body) => {
    await api.call('reviewAttempt', { project_id: projectId, attempt_id: a.id }, { json: body });
    onDone(a.id);
  };
  const confirm = useAction(() => send({ verdict: a.verdict }), { keepBusy: true });
  const correct = useAction(() => send({ verdict, score: score === '' ? null : Number(score) / 100 }), { keepBusy: true });
  const busy = confirm.busy || correct.busy;
  const id = `grade-${a.id}`;
  const confidence = a.confidence
    ? t('gradeConfidence', { label: t(`gradeLabel.${a.confidence.label}`, {}, a.confidence.label), p: a.confidence.p === null ? '' : `${Math.round(a.confidence.p * 100)}%` })
    : '';
  return html`<li class="review-item grade-item" data-attempt=${a.id}>
    <p class="meta">${t('student')}: ${a.student_email} · ${formatDate(a.created_at, lang)}</p>
    <p class="question"><strong>${a.question}</strong></p>
    <p><span class="meta">${t('referenceAnswer')}:</span> ${a.reference_answer}</p>
    <p><span class="meta">${t('studentAnswer')}:</span> ${a.answer}</p>
    <p class=${`verdict-${a.verdict}`}><span class="meta">${t('modelGrade')}:</span> <strong>${t(`verdict.${a.verdict}`)}</strong> · ${t('score')} ${Math.round(a.score * 100)}%${confidence ? ` · ${confidence}` : ''}</p>
    ${a.feedback && html`<p class="meta">${a.feedback}</p>`}
    <div class="row"><button type="button" class="primary" disabled=${busy} onClick=${() => busy || confirm.run()}>${t('confirmGrade')}</button></div>
    <form class="correct-grade" onSubmit=${correct.submit}>
      <fieldset><legend>${t('correctGrade')}</legend>
        <label for=${`${id}-verdict`}>${t('verdictLabel')}</label>
        <select id=${`${id}-verdict`} value=${verdict} onChange=${(e) => setVerdict(e.target.value)}>
          ${VERDICTS.map((v) => html`<option key=${v} value=${v}>${t(`verdict.${v}`)}</option>`)}
        </select>
        <label for=${`${id}-score`}>${t('scorePercent')}</label>
        <input id=${`${id}-score`} type="number" min="0" max="100" step="1" value=${score} aria-describedby=${`${id}-hint`} onInput=${(e) => setScore(e.target.value)} />
        <p class="hint" id=${`${id}-hint`}>${t('scoreHint')}</p>
        <button type="submit" disabled=${busy}>${t('save')}</button>
      </fieldset>
    </form>
    <${ErrorNote} error=${confirm.error || correct.error} />
  </li>`;
}
