// Members and roles (owners add, change and remove, and hand a viewer who forgot a password a reset link
// where the server has that route; everyone sees who teaches), and the project's settings
// for its owner: name, language, attempts per question and, where the server has it, the exam date.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go } from '../router.js';
import { Busy, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';

const ROLES = ['owner', 'editor', 'viewer'];

export function Members() {
  const { owner } = useApp();
  return html`<div class="grid two">
    <${MemberList} />
    ${owner && html`<${ProjectSettings} />`}
  </div>`;
}

function MemberList() {
  const { api, t, lang, projectId, owner } = useApp();
  const [links, setLinks] = useState({}); // user id -> a password reset link an owner made for a viewer
  const members = useAsync(() => api.call('listMembers', { project_id: projectId }, { query: { limit: 200 } }), [projectId]);
  const { run: act, error } = useAction(async (work) => {
    await work();
    members.reload();
  });
  const setRole = (m, role) => act(() => api.call('changeRole', { project_id: projectId, user_id: m.user_id }, { json: { role } }));
  const remove = (m) => confirm(t('confirmRemove', { email: m.email })) && act(() => api.call('removeMember', { project_id: projectId, user_id: m.user_id }));
  const resetLink = (m) => act(async () => {
    const made = await api.call('memberResetLink', { project_id: projectId, member_id: m.user_id });
    setLinks({ ...links, [m.user_id]: made });
  });
  const resets = owner && api.has('memberResetLink');
  const data = members.data;
  return html`<section aria-labelledby="members-title">
    <h2 id="members-title">${t('tab.members')}</h2>
    ${members.loading && !data && html`<${Busy} />`}
    <${ErrorNote} error=${members.error || error} />
    ${data && html`<p class="meta">${ROLES.map((r) => `${t(`role.${r}`)}: ${data.counts[r] || 0}`).join(' · ')}</p>`}
    <ul class="list members">
      ${(data?.members || []).map((m) => html`<li key=${m.user_id}>
        <span>${m.email}</span>
        ${owner
          ? html`<label class="visually-hidden" for=${`role-${m.user_id}`}>${t('roleOf', { email: m.email })}</label>
            <select id=${`role-${m.user_id}`} value=${m.role} onChange=${(e) => setRole(m, e.target.value)}>
              ${ROLES.map((r) => html`<option key=${r} value=${r}>${t(`role.${r}`)}</option>`)}
            </select>
            <button type="button" class="link danger" onClick=${() => remove(m)} aria-label=${`${t('remove')}: ${m.email}`}>${t('remove')}</button>`
          : html`<span class="badge">${t(`role.${m.role}`)}</span>`}
        <span class="meta">${formatDate(m.joined_at, lang)}</span>
        ${resets && m.role === 'viewer' && html`<button type="button" class="link" onClick=${() => resetLink(m)}
          aria-label=${`${t('resetLink')}: ${m.email}`}>${t('resetLink')}</button>`}
        ${links[m.user_id] && html`<div class="reset-link" role="status">
          <label for=${`reset-${m.user_id}`}>${t('resetLinkFor', { email: m.email })}</label>
          <input id=${`reset-${m.user_id}`} readonly value=${links[m.user_id].link} onFocus=${(e) => e.target.select()} />
          <p class="hint">${t('validUntil', { date: formatDate(links[m.user_id].expires_at, lang) })}</p>
        </div>`}
      </li>`)}
    </ul>
    ${owner && html`<${AddMember} onAdded=${members.reload} />`}
  </section>`;
}

function AddMember({ onAdded }) {
  const { api, t, projectId } = useApp();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const { submit, error } = useAction(async () => {
    await api.call('addMember', { project_id: projectId }, { json: { email: email.trim(), role } });
    setEmail('');
    onAdded();
  });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="add-member">
    <h3 id="add-member">${t('addMember')}</h3>
    <label for="member-email">${t('email')}</label>
    <input id="member-email" type="email" required maxlength="320" value=${email} onInput=${(e) => setEmail(e.target.value)} />
    <label for="member-role">${t('role')}</label>
    <select id="member-role" value=${role} onChange=${(e) => setRole(e.target.value)}>
      ${ROLES.map((r) => html`<option key=${r} value=${r}>${t(`role.${r}`)}</option>`)}
    </select>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary">${t('add')}</button>
  </form>`;
}

function ProjectSettings() {
  const { api, t, project, projectId, reloadProject } = useApp();
  const [form, setForm] = useState({
    name: project.name,
    language: project.language,
    max_attempts_per_question: project.max_attempts_per_question ?? '',
    exam_date: project.exam_date ?? '',
  });
  const [status, setStatus] = useState(null);
  const withExam = api.has('updateProject', 'exam_date');
  const set = (name) => (e) => setForm({ ...form, [name]: e.target.value });
  const { run, error } = useAction((work) => work()); // saving and deleting share one error line
  const save = (e) => {
    e.preventDefault();
    const body = {
      name: form.name.trim(),
      language: form.language,
      max_attempts_per_question: form.max_attempts_per_question === '' ? null : Number(form.max_attempts_per_question),
      ...(withExam ? { exam_date: form.exam_date || null } : {}),
    };
    run(async () => {
      await api.call('updateProject', { project_id: projectId }, { json: body });
      setStatus(t('saved'));
      reloadProject();
    });
  };
  const remove = () => confirm(t('confirmDeleteProject', { name: project.name })) && run(async () => {
    await api.call('deleteProject', { project_id: projectId });
    go();
  });
  return html`<form class="card" onSubmit=${save} aria-labelledby="settings-title">
    <h2 id="settings-title">${t('projectSettings')}</h2>
    <label for="set-name">${t('name')}</label>
    <input id="set-name" required maxlength="200" value=${form.name} onInput=${set('name')} />
    <label for="set-language">${t('language')}</label>
    <select id="set-language" value=${form.language} onChange=${set('language')}>
      ${['auto', 'pt', 'en'].map((l) => html`<option key=${l} value=${l}>${t(`lang.${l}`)}</option>`)}
    </select>
    <label for="set-attempts">${t('maxAttempts')}</label>
    <input id="set-attempts" type="number" min="1" max="1000" value=${form.max_attempts_per_question} onInput=${set('max_attempts_per_question')} />
    <p class="hint">${t('maxAttemptsHint')}</p>
    ${withExam && html`<label for="set-exam">${t('projectExam')}</label>
      <input id="set-exam" type="date" value=${form.exam_date} onInput=${set('exam_date')} />`}
    <${ErrorNote} error=${error} />
    <div class="row">
      <button type="submit" class="primary">${t('save')}</button>
      ${status && html`<span role="status">${status}</span>`}
    </div>
    <button type="button" class="danger" onClick=${remove}>${t('deleteProject')}</button>
  </form>`;
}
