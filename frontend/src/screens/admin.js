// The server's administration (administrators only; the API refuses everyone else): a new account (a
// teacher's, by default) with a one-time link that sets its password; accounts, searched by email, made
// teachers or not, disabled and enabled again, a password reset link to hand over; and the security audit
// log; and the worker processes, one by one (a dead one shows within a minute).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { ErrorNote, ListState, Pager, formatDate, useAction, useAsync } from '../ui.js';

const PAGE = 50;
const EVENTS = 25; // the audit log's page: the newest first

export function Admin() {
  const { api, t } = useApp();
  return html`<section>
    <h1>${t('admin')}</h1>
    <div class="grid two">
      ${api.has('adminUsers') ? html`<${Users} />` : html`<p class="empty">${t('adminMissing')}</p>`}
      ${api.has('adminAudit') && html`<${Audit} />`}
      ${api.has('adminWorkers') && html`<${Workers} />`}
    </div>
  </section>`;
}

function Users() {
  const { api, t } = useApp();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const users = useAsync(() => api.call('adminUsers', {}, { query: { q, limit: PAGE, offset } }), [q, offset]);
  const search = (e) => {
    e.preventDefault();
    setOffset(0);
    setQ(typed.trim());
  };
  return html`<section aria-labelledby="users-title">
    <h2 id="users-title">${t('users')}</h2>
    ${api.has('adminCreateUser') && html`<${NewAccount} onCreated=${users.reload} />`}
    <form class="row nowrap" role="search" onSubmit=${search}>
      <label class="visually-hidden" for="user-search">${t('searchUsers')}</label>
      <input id="user-search" type="search" placeholder=${t('searchUsers')} value=${typed} onInput=${(e) => setTyped(e.target.value)} />
      <button type="submit">${t('search')}</button>
    </form>
    <${ListState} list=${users} empty=${t('noUsers')} />
    <ul class="list users">
      ${(users.data || []).map((u) => html`<${UserRow} key=${u.id} user=${u} onChanged=${(row) => users.setData(users.data.map((x) => (x.id === row.id ? row : x)))} />`)}
    </ul>
    <${Pager} offset=${offset} page=${PAGE} count=${users.data?.length} onOffset=${setOffset} />
  </section>`;
}

// A new account without a password (POST /admin/users), a teacher's unless unticked, and its one-time link
// that sets the password: handed over by the administrator, or mailed to the account where mail is set up.
function NewAccount({ onCreated }) {
  const { api, t, lang } = useApp();
  const [form, setForm] = useState({ email: '', display_name: '', is_teacher: true });
  const [made, setMade] = useState(null);
  const [copied, setCopied] = useState(false);
  const { submit, busy, error } = useAction(async () => {
    setMade(null);
    setCopied(false);
    const body = { email: form.email.trim(), display_name: form.display_name.trim() || null, is_teacher: form.is_teacher };
    setMade(await api.call('adminCreateUser', {}, { json: body }));
    setForm({ email: '', display_name: '', is_teacher: true });
    onCreated();
  });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(made.link);
    } catch {
      const field = document.getElementById('new-account-link');
      field.select(); // no clipboard permission: the link is selected, for Ctrl+C
      document.execCommand('copy');
    }
    setCopied(true);
  };
  return html`<form class="card new-account" onSubmit=${submit} aria-labelledby="new-account-title">
    <h3 id="new-account-title">${t('createTeacherAccount')}</h3>
    <label for="new-account-email">${t('email')}</label>
    <input id="new-account-email" type="email" required maxlength="254" autocomplete="off" value=${form.email}
      onInput=${(e) => setForm({ ...form, email: e.target.value })} />
    <label for="new-account-name">${t('nameOptional')}</label>
    <input id="new-account-name" maxlength="200" autocomplete="off" value=${form.display_name}
      onInput=${(e) => setForm({ ...form, display_name: e.target.value })} />
    <label class="check"><input type="checkbox" checked=${form.is_teacher}
      onChange=${(e) => setForm({ ...form, is_teacher: e.target.checked })} /> ${t('teacherCanCreate')}</label>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${t('createAccountButton')}</button>
    ${made && html`<div class="reset-link" role="status">
      <p><strong>${t('accountCreated', { email: made.account.email })}</strong></p>
      <label for="new-account-link">${t('setPasswordLinkFor', { email: made.account.email })}</label>
      <div class="row nowrap">
        <input id="new-account-link" readonly value=${made.link} onFocus=${(e) => e.target.select()} />
        <button type="button" class="copy" onClick=${copy}>${copied ? t('copied') : t('copyLink')}</button>
      </div>
      <p class="hint">${t('setPasswordLinkHelp', { date: formatDate(made.expires_at, lang) })}${made.mailed ? ` ${t('linkMailed', { email: made.account.email })}` : ''}</p>
    </div>`}
  </form>`;
}

function UserRow({ user: u, onChanged }) {
  const { api, t, lang, user: me } = useApp();
  const [link, setLink] = useState(null);
  const { run, busy, error } = useAction(async (work) => work());
  const toggle = () => run(async () => {
    onChanged(await api.call(u.disabled_at ? 'enableUser' : 'disableUser', { user_id: u.id }));
  });
  const reset = () => run(async () => setLink(await api.call('userResetLink', { user_id: u.id })));
  const [teaching, setTeaching] = useState(null); // the box as clicked, until the server answers
  const teach = (is_teacher) => {
    setTeaching(is_teacher);
    run(async () => {
      try {
        onChanged(await api.call('adminUpdateUser', { user_id: u.id }, { json: { is_teacher } }));
      } finally {
        setTeaching(null);
      }
    });
  };
  const teacherToggle = api.has('adminUpdateUser') && typeof u.is_teacher === 'boolean';
  const linkId = `reset-link-${u.id}`;
  return html`<li class="user" data-email=${u.email}>
    <p class="user-head"><strong>${u.display_name || u.email}</strong>${u.display_name ? html` <span class="meta">${u.email}</span>` : ''}
      ${u.is_admin && html` <span class="badge">${t('administrator')}</span>`}
      ${u.disabled_at && html` <span class="badge status-failed">${t('disabled')}</span>`}</p>
    <span class="meta">${t('created', { date: formatDate(u.created_at, lang) })}${u.has_password ? '' : ` · ${t('noPassword')}`}</span>
    <div class="row">
      ${teacherToggle && html`<label class="check teacher-toggle"><input type="checkbox" checked=${teaching ?? u.is_teacher} disabled=${busy}
        onChange=${(e) => teach(e.target.checked)} aria-label=${`${t('teacher')}: ${u.email}`} /> ${t('teacher')}</label>`}
      ${u.id !== me?.id && html`<button type="button" class=${u.disabled_at ? '' : 'danger'} disabled=${busy} onClick=${toggle}
        aria-label=${`${u.disabled_at ? t('enable') : t('disable')}: ${u.email}`}>${u.disabled_at ? t('enable') : t('disable')}</button>`}
      ${api.has('userResetLink') && html`<button type="button" disabled=${busy} onClick=${reset}
        aria-label=${`${t('resetLink')}: ${u.email}`}>${t('resetLink')}</button>`}
    </div>
    ${link && html`<div class="reset-link" role="status">
      <label for=${linkId}>${t('resetLinkFor', { email: u.email })}</label>
      <input id=${linkId} readonly value=${link.link} onFocus=${(e) => e.target.select()} />
      <p class="hint">${t('validUntil', { date: formatDate(link.expires_at, lang) })}${link.mailed ? ` · ${t('resetMailed')}` : ''}</p>
    </div>`}
    <${ErrorNote} error=${error} />
  </li>`;
}

function Audit() {
  const { api, t, lang } = useApp();
  const [offset, setOffset] = useState(0);
  const events = useAsync(() => api.call('adminAudit', {}, { query: { limit: EVENTS, offset } }), [offset]);
  return html`<section aria-labelledby="audit-title">
    <h2 id="audit-title">${t('securityAudit')}</h2>
    <${ListState} list=${events} empty=${t('noEvents')} />
    <ul class="list audit">
      ${(events.data || []).map((e) => html`<li key=${e.id}>
        <span><code>${e.action}</code></span>
        <span>${e.actor_email || t('noActor')}${e.target_email && e.target_email !== e.actor_email ? ` → ${e.target_email}` : ''}</span>
        <span class="meta">${formatDate(e.created_at, lang)}</span>
      </li>`)}
    </ul>
    <${Pager} offset=${offset} page=${EVENTS} count=${events.data?.length} onOffset=${setOffset} />
  </section>`;
}

// Every worker process of the last day (GET /admin/workers): host, pid, queues, and whether it is running,
// stopped, or dead (silent for three beats: killed, or its machine gone).
function Workers() {
  const { api, t, lang } = useApp();
  const workers = useAsync(() => api.call('adminWorkers'), []);
  return html`<section aria-labelledby="workers-title">
    <h2 id="workers-title">${t('workers')}</h2>
    <${ListState} list=${workers} empty=${t('noWorkers')} />
    <ul class="list workers">
      ${(workers.data || []).map((w) => html`<li key=${`${w.host}:${w.pid}:${w.started_at}`}>
        <span><strong class=${`worker-${w.status}`}>${t(`worker_${w.status}`)}</strong> ${w.host} · pid ${w.pid}</span>
        <span>${w.queues.join(', ')}</span>
        <span class="meta">${t('lastBeat')} ${formatDate(w.last_beat_at, lang)}</span>
      </li>`)}
    </ul>
  </section>`;
}
