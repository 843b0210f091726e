// Study: the quiz (questions of the bank, answered and graded with feedback, missing points and sources)
// and, where the server has the study loop's routes, the due queue with flashcards (flip, rate), the exam
// date and mastery per topic. Questions, options, cards and feedback are Markdown (code, formulas).
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { BarChart } from '../charts.js';
import { Busy, CitationChips, Empty, ErrorNote, PassagePanel, formatDate, sectionLabel, useAction, useAsync } from '../ui.js';
import { GradeStatus } from './grades.js';
import { Markdown } from '../markdown.js';

export function Study() {
  const { api, t } = useApp();
  const [passage, setPassage] = useState(null);
  const loop = api.has('studyQueue');
  const [mode, setMode] = useState(loop ? 'queue' : 'quiz');
  const modes = [
    ...(loop ? [['queue', t('studyToday')]] : []),
    ['quiz', t('quiz')],
    ...(api.has('mastery') ? [['mastery', t('mastery')]] : []),
  ];
  return html`<div class=${`with-side${passage ? ' open' : ''}`}>
    <section aria-labelledby="study-title">
      <h2 id="study-title">${t('tab.study')}</h2>
      ${modes.length > 1 && html`<div class="segmented" role="group" aria-label=${t('studyMode')}>
        ${modes.map(([id, label]) => html`<button key=${id} type="button" aria-pressed=${mode === id} onClick=${() => setMode(id)}>${label}</button>`)}
      </div>`}
      ${mode === 'queue' && html`<${Queue} onOpen=${setPassage} />`}
      ${mode === 'quiz' && html`<${Quiz} onOpen=${setPassage} />`}
      ${mode === 'mastery' && html`<${Mastery} />`}
    </section>
    ${passage && html`<${PassagePanel} citation=${passage} onClose=${() => setPassage(null)} />`}
  </div>`;
}

function Quiz({ onOpen }) {
  const { api, t, projectId, writer } = useApp();
  // With the study loop's review states, the quiz is the approved bank (what students may study).
  const curated = api.has('reviewQueue');
  const bank = useAsync(
    () => (curated
      ? api.call('reviewQueue', { project_id: projectId }, { query: { review_state: 'approved', limit: 200 } })
      : api.call('listQuestions', { project_id: projectId }, { query: { status: 'active', limit: 200 } })),
    [projectId],
  );
  const [index, setIndex] = useState(0);
  const questions = bank.data || [];
  const current = questions[Math.min(index, questions.length - 1)];
  return html`<div>
    ${writer && html`<${Generate} onDone=${bank.reload} />`}
    ${bank.loading && !bank.data && html`<${Busy} />`}
    <${ErrorNote} error=${bank.error} />
    ${bank.data && !questions.length && html`<${Empty}>${t('noQuestions')}<//>`}
    ${current && html`
      <p class="meta" aria-live="polite">${t('questionOf', { i: Math.min(index, questions.length - 1) + 1, n: questions.length })}</p>
      <${QuizCard} key=${current.id} question=${current} onOpen=${onOpen} />
      <div class="row">
        <button type="button" disabled=${index === 0} onClick=${() => setIndex(index - 1)}>${t('previous')}</button>
        <button type="button" disabled=${index >= questions.length - 1} onClick=${() => setIndex(index + 1)}>${t('next')}</button>
      </div>`}
  </div>`;
}

function Generate({ onDone }) {
  const { api, t, projectId } = useApp();
  const offered = api.spec?.components?.schemas?.QuestionOut?.properties?.type?.enum || ['multiple_choice', 'short_answer', 'application'];
  const [n, setN] = useState(3);
  const [types, setTypes] = useState(offered);
  const [result, setResult] = useState(null);
  const toggle = (type) => setTypes(types.includes(type) ? types.filter((x) => x !== type) : [...types, type]);
  const { submit, busy, error } = useAction(async () => {
    setResult(null);
    setResult(await api.call('generateQuestions', { project_id: projectId }, { json: { n: Number(n), types } }));
    onDone();
  });
  return html`<details class="card generate"><summary>${t('generateQuestions')}</summary>
    <form onSubmit=${submit}>
      <label for="gen-n">${t('howMany')}</label>
      <input id="gen-n" type="number" min="1" max="10" value=${n} onInput=${(e) => setN(e.target.value)} />
      <fieldset><legend>${t('types')}</legend>
        ${offered.map((type) => html`<label key=${type} class="check"><input type="checkbox" checked=${types.includes(type)} onChange=${() => toggle(type)} /> ${t(`qtype.${type}`, {}, type)}</label>`)}
      </fieldset>
      <${ErrorNote} error=${error} />
      ${busy ? html`<${Busy} label=${t('generating')} />` : html`<button type="submit" class="primary" disabled=${!types.length}>${t('generate')}</button>`}
      ${result && html`<p role="status">${t('generated', { saved: result.questions.length, review: result.review, rejected: result.rejected.length })}</p>
        ${result.rejected.length > 0 && html`<ul class="meta">${result.rejected.map((r, i) => html`<li key=${i}>${t(`rejection.${r.reason}`, {}, r.reason)}: ${r.question || r.detail}</li>`)}</ul>`}`}
    </form>
  </details>`;
}

// One question: the student's answer, then the grade, feedback, missing points and sources.
export function QuizCard({ question: q, onOpen, onGraded }) {
  const { api, t, projectId } = useApp();
  const [answer, setAnswer] = useState('');
  const [grade, setGrade] = useState(null);
  const { submit, busy, error } = useAction(async () => {
    const result = await api.call('attempt', { project_id: projectId, question_id: q.id }, { json: { answer } });
    setGrade(result);
    onGraded?.(result);
  });
  const id = `q-${q.id}`;
  return html`<article class="card quiz" aria-labelledby=${id} data-question=${q.id}>
    <p class="meta">${t(`qtype.${q.type}`, {}, q.type)} · ${t(`difficulty.${q.difficulty}`, {}, q.difficulty)}${q.section_path?.length ? ` · ${sectionLabel(q.section_path)}` : ''}</p>
    <h3 id=${id} class="question"><${Markdown} inline text=${q.question} className="markdown" /></h3>
    <form onSubmit=${submit}>
      ${q.options?.length
        ? html`<fieldset><legend class="visually-hidden">${t('chooseOne')}</legend>
            ${q.options.map((o, i) => html`<label key=${i} class="option"><input type="radio" name=${id} value=${o} checked=${answer === o} onChange=${() => setAnswer(o)} required /> <${Markdown} inline text=${o} className="markdown" /></label>`)}
          </fieldset>`
        : html`<label for=${`${id}-answer`}>${t('yourAnswer')}</label>
          <textarea id=${`${id}-answer`} rows="4" maxlength="5000" required value=${answer} onInput=${(e) => setAnswer(e.target.value)}></textarea>`}
      <${ErrorNote} error=${error} />
      ${busy ? html`<${Busy} label=${t('grading')} />` : html`<button type="submit" class="primary" disabled=${!answer}>${grade ? t('tryAgain') : t('submitAnswer')}</button>`}
    </form>
    ${grade && html`<${Grade} grade=${grade} onOpen=${onOpen} />`}
    <${Attempts} question=${q} graded=${grade} />
  </article>`;
}

// The student's own attempts at the question (a provisional grade says the teacher will check it),
// read when opened and again after each grade.
function Attempts({ question: q, graded }) {
  const { api, t, lang, projectId } = useApp();
  const [open, setOpen] = useState(false);
  const list = useAsync(
    () => (open ? api.call('listAttempts', { project_id: projectId, question_id: q.id }, { query: { limit: 20 } }) : Promise.resolve(null)),
    [projectId, q.id, open, graded],
  );
  return html`<details class="attempts" onToggle=${(e) => setOpen(e.target.open)}>
    <summary>${t('yourAttempts')}</summary>
    ${open && list.loading && !list.data && html`<${Busy} />`}
    <${ErrorNote} error=${list.error} />
    ${list.data && !list.data.length && html`<${Empty}>${t('noAttempts')}<//>`}
    ${list.data?.length > 0 && html`<ul class="list">${list.data.map((a) => html`<li key=${a.id} class=${`verdict-${a.verdict}`}>
      <span class="meta">${formatDate(a.created_at, lang)}</span> <strong>${t(`verdict.${a.verdict}`)}</strong> · ${t('score')} ${Math.round(a.score * 100)}%
      <${GradeStatus} status=${a.status} />
    </li>`)}</ul>`}
  </details>`;
}

function Grade({ grade: g, onOpen }) {
  const { t } = useApp();
  return html`<div class=${`grade verdict-${g.verdict}`} role="status" aria-live="polite">
    <${GradeStatus} status=${g.status} />
    <p><strong>${t(`verdict.${g.verdict}`)}</strong> · ${t('score')} ${Math.round(g.score * 100)}%</p>
    <${Markdown} text=${g.feedback} />
    ${g.missing_points?.length > 0 && html`<h4>${t('missingPoints')}</h4><ul>${g.missing_points.map((m, i) => html`<li key=${i}>${m}</li>`)}</ul>`}
    ${g.reference_answer && html`<h4>${t('referenceAnswer')}</h4><${Markdown} text=${g.reference_answer} />`}
    ${g.explanation && html`<p class="meta">${g.explanation}</p>`}
    ${g.attempts_left !== null && g.attempts_left !== undefined && html`<p class="meta">${t('attemptsLeft', { n: g.attempts_left })}</p>`}
    <${CitationChips} citations=${g.citations} onOpen=${onOpen} />
  </div>`;
}

// The study loop's queue: due items first, then new ones; flashcards flip and are rated 1–4, questions are
// answered (a graded attempt also schedules the item).
function Queue({ onOpen }) {
  const { api, t, projectId } = useApp();
  const queue = useAsync(() => api.call('studyQueue', { project_id: projectId }, { query: { limit: 20 } }), [projectId]);
  const [position, setPosition] = useState(0);
  useEffect(() => setPosition(0), [queue.data]);
  const data = queue.data;
  const item = data?.items?.[position];
  // A new exam date changes the predicted recall the queue reports: the queue is asked again.
  return html`<div>
    ${api.has('studySettings') && html`<${ExamDate} exam=${data?.exam} onSaved=${queue.reload} />`}
    ${queue.loading && !data && html`<${Busy} />`}
    <${ErrorNote} error=${queue.error} />
    ${data && html`<p class="meta">${t('dueCounts', { due: data.due_count, fresh: data.new_count })}</p>`}
    ${data && !item && html`<${Empty}>${t('queueDone')}<//>
      <button type="button" onClick=${queue.reload}>${t('reloadQueue')}</button>`}
    ${item && (item.question.type === 'flashcard'
      ? html`<${Flashcard} key=${item.question.id} item=${item} focus=${position > 0} onNext=${() => setPosition(position + 1)} />`
      : html`<div key=${item.question.id}><${QuizCard} question=${item.question} onOpen=${onOpen} />
          <button type="button" onClick=${() => setPosition(position + 1)}>${t('next')}</button></div>`)}
  </div>`;
}

// Keyboard users keep their place: the front takes the focus when the card follows a rated one, the back
// when the card is flipped (the button that had the focus is gone).
function Flashcard({ item, focus, onNext }) {
  const { api, t, projectId } = useApp();
  const [flipped, setFlipped] = useState(false);
  const front = useRef(null);
  const back = useRef(null);
  useEffect(() => { if (focus) front.current?.focus(); }, []);
  useEffect(() => { if (flipped) back.current?.focus(); }, [flipped]);
  const { run, busy, error } = useAction(async (rating) => {
    await api.call('review', { project_id: projectId }, { json: { question_id: item.question.id, rating } });
    onNext();
  }, { keepBusy: true });
  const rate = (rating) => busy || run(rating); // one review per card: a double click must not rate it twice
  return html`<article class="card flashcard" data-question=${item.question.id}>
    <p class="meta">${item.is_new ? t('newCard') : t(`cardState.${item.card.state}`, {}, item.card.state)}${item.question.section_path?.length ? ` · ${sectionLabel(item.question.section_path)}` : ''}</p>
    <h3 class="front" tabindex="-1" ref=${front}><${Markdown} inline text=${item.question.question} className="markdown" /></h3>
    ${flipped
      ? html`<div class="back" tabindex="-1" ref=${back}><${Markdown} text=${item.question.answer} /></div>
        <div class="row" role="group" aria-label=${t('rateRecall')}>
          ${[1, 2, 3, 4].map((r) => html`<button key=${r} type="button" class=${`rate rate-${r}`} disabled=${busy} onClick=${() => rate(r)}>${t(`rating.${r}`)}</button>`)}
        </div>`
      : html`<button type="button" class="primary" onClick=${() => setFlipped(true)}>${t('showAnswer')}</button>`}
    <${ErrorNote} error=${error} />
  </article>`;
}

function ExamDate({ exam, onSaved }) {
  const { api, t, projectId } = useApp();
  const settings = useAsync(() => api.call('studySettings', { project_id: projectId }), [projectId]);
  const [date, setDate] = useState(null);
  const [saved, setSaved] = useState(false);
  const value = date ?? settings.data?.exam_date ?? '';
  const { submit, error } = useAction(async () => {
    await api.call('putStudySettings', { project_id: projectId }, { json: { exam_date: value || null } });
    setSaved(true);
    settings.reload();
    onSaved?.();
  });
  return html`<form class="card exam" onSubmit=${submit}>
    <label for="exam-date">${t('examDate')}</label>
    <input id="exam-date" type="date" value=${value} onInput=${(e) => { setDate(e.target.value); setSaved(false); }} />
    ${settings.data?.project_exam_date && html`<p class="meta">${t('projectExamDate', { d: settings.data.project_exam_date })}</p>`}
    ${exam && html`<p class="meta exam-forecast">${t('examOn', { d: exam.date, source: t(`examSource.${exam.source}`, {}, exam.source) })} · ${t('predictedRetention', { p: Math.round(exam.predicted_retention * 100) })}</p>`}
    <button type="submit">${t('save')}</button>
    ${saved && html`<span role="status"> ${t('saved')}</span>`}
    <${ErrorNote} error=${error || settings.error} />
  </form>`;
}

function Mastery() {
  const { api, t, projectId } = useApp();
  const mastery = useAsync(() => api.call('mastery', { project_id: projectId }), [projectId]);
  const topics = mastery.data?.topics || [];
  return html`<div>
    ${mastery.loading && !mastery.data && html`<${Busy} />`}
    <${ErrorNote} error=${mastery.error} />
    ${mastery.data && !topics.length && html`<${Empty}>${t('noMastery')}<//>`}
    ${topics.length > 0 && html`<${BarChart} title=${t('masteryByTopic')} unit="%"
      rows=${topics.map((tp) => ({ label: sectionLabel(tp.topic) || t('noSection'), value: tp.mastery, note: t('studiedOf', { s: tp.studied, n: tp.items }) }))} />`}
  </div>`;
}
