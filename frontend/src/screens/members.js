// Members and roles (owners invite by email, change roles and remove; everyone sees who teaches), the
// project's pending personal invitations (owners: withdrawn here), and the project's settings for its
// owner: name, language, attempts per question and, where the server has it, the exam date. An invitation
// by email is personal: the person sees it on their Account screen once signed in with that address, and
// accepts or declines it (the answer never says whether the address has an account).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go } from '../router.js';
import { Busy, ErrorNote, ListState, formatDate, useAction, useAsync } from '../ui.js';

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
  const members = useAsync(() => api.call('listMembers', { project_id: projectId }, { query: { limit: 200 } }), [projectId]);
  const invites = owner && api.has('memberInvitations');
  const pending = useAsync(
    () => (invites ? api.call('memberInvitations', { project_id: projectId }) : Promise.resolve(null)),
    [projectId, invites],
  );
  const { run: act, error } = useAction(async (work) => {
    await work();
    members.reload();
  });
  const setRole = (m, role) => act(() => api.call('changeRole', { project_id: projectId, user_id: m.user_id }, { json: { role } }));
  const remove = (m) => confirm(t('confirmRemove', { email: m.email })) && act(() => api.call('removeMember', { project_id: projectId, user_id: m.user_id }));
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
      </li>`)}
    </ul>
    ${invites && html`<${PendingInvitations} pending=${pending} />`}
    ${owner && html`<${InviteMember} onInvited=${pending.reload} />`}
  </section>`;
}

// The project's personal invitations not yet accepted or declined: an owner withdraws one sent by mistake.
function PendingInvitations({ pending }) {
  const { api, t, lang, projectId } = useApp();
  const { run, error } = useAction(async (invitation) => {
    await api.call('withdrawMemberInvitation', { project_id: projectId, invitation_id: invitation.id });
    pending.reload();
  });
  const withdraw = (invitation) => confirm(t('confirmWithdraw', { email: invitation.email })) && run(invitation);
  return html`<section aria-labelledby="pending-title">
    <h3 id="pending-title">${t('pendingInvitations')}</h3>
    <${ListState} list=${pending} error=${error} empty=${t('noPendingInvitations')} />
    <ul class="list pending-invitations">
      ${(pending.data || []).map((inv) => html`<li key=${inv.id} data-email=${inv.email}>
        <span>${inv.email}</span>
        <span class="badge">${t(`role.${inv.role}`)}</span>
        <span class="meta">${t('validUntil', { date: formatDate(inv.expires_at, lang) })}</span>
        <button type="button" class="link danger" onClick=${() => withdraw(inv)}
          aria-label=${`${t('withdraw')}: ${inv.email}`}>${t('withdraw')}</button>
      </li>`)}
    </ul>
  </section>`;
}

// An invitation by email (202): said as sent, whether or not the address has an account (the server
// never says); inviting the same address again replaces its role and expiry.
function InviteMember({ onInvited }) {
  const { api, t, projectId } = useApp();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const [sent, setSent] = useState(null);
  const { submit, busy, error } = useAction(async () => {
    setSent(null);
    const invited = await api.call('addMember', { project_id: projectId }, { json: { email: email.trim(), role } });
    setSent(invited);
    setEmail('');
    onInvited();
  });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="invite-member">
    <h3 id="invite-member">${t('inviteByEmail')}</h3>
    <p class="hint" id="invite-member-hint">${t('inviteByEmailHelp')}</p>
    <label for="member-email">${t('email')}</label>
    <input id="member-email" type="email" required maxlength="320" aria-describedby="invite-member-hint"
      value=${email} onInput=${(e) => { setEmail(e.target.value); setSent(null); }} />
    <label for="member-role">${t('role')}</label>
    <select id="member-role" value=${role} onChange=${(e) => setRole(e.target.value)}>
      ${ROLES.map((r) => html`<option key=${r} value=${r}>${t(`role.${r}`)}</option>`)}
    </select>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${t('invite')}</button>
    ${sent && html`<p class="notice" role="status">${t(sent.mailed ? 'invitationSentMailed' : 'invitationSent', { email: sent.email })}</p>`}
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
