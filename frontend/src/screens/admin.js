// The server's administration (administrators only; the API refuses everyone else): accounts, searched
// by email, disabled and enabled again, a password reset link to hand over; and the security audit log.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { Busy, Empty, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';

const PAGE = 50;
const EVENTS = 25; // the audit log's page: the newest first

export function Admin() {
  const { api, t } = useApp();
  return html`<section>
    <h1>${t('admin')}</h1>
    <div class="grid two">
      ${api.has('adminUsers') ? html`<${Users} />` : html`<p class="empty">${t('adminMissing')}</p>`}
      ${api.has('adminAudit') && html`<${Audit} />`}
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
    <form class="row nowrap" role="search" onSubmit=${search}>
      <label class="visually-hidden" for="user-search">${t('searchUsers')}</label>
      <input id="user-search" type="search" placeholder=${t('searchUsers')} value=${typed} onInput=${(e) => setTyped(e.target.value)} />
      <button type="submit">${t('search')}</button>
    </form>
    ${users.loading && !users.data && html`<${Busy} />`}
    <${ErrorNote} error=${users.error} />
    ${users.data && !users.data.length && html`<${Empty}>${t('noUsers')}<//>`}
    <ul class="list users">
      ${(users.data || []).map((u) => html`<${UserRow} key=${u.id} user=${u} onChanged=${(row) => users.setData(users.data.map((x) => (x.id === row.id ? row : x)))} />`)}
    </ul>
    <div class="row">
      ${offset > 0 && html`<button type="button" onClick=${() => setOffset(Math.max(0, offset - PAGE))}>${t('previous')}</button>`}
      ${users.data?.length === PAGE && html`<button type="button" onClick=${() => setOffset(offset + PAGE)}>${t('next')}</button>`}
    </div>
  </section>`;
}

function UserRow({ user: u, onChanged }) {
  const { api, t, lang, user: me } = useApp();
  const [link, setLink] = useState(null);
  const { run, busy, error } = useAction(async (work) => work());
  const toggle = () => run(async () => {
    onChanged(await api.call(u.disabled_at ? 'enableUser' : 'disableUser', { user_id: u.id }));
  });
  const reset = () => run(async () => setLink(await api.call('userResetLink', { user_id: u.id })));
  const linkId = `reset-link-${u.id}`;
  return html`<li class="user" data-email=${u.email}>
    <p class="user-head"><strong>${u.display_name || u.email}</strong>${u.display_name ? html` <span class="meta">${u.email}</span>` : ''}
      ${u.is_admin && html` <span class="badge">${t('administrator')}</span>`}
      ${u.disabled_at && html` <span class="badge status-failed">${t('disabled')}</span>`}</p>
    <span class="meta">${t('created', { date: formatDate(u.created_at, lang) })}${u.has_password ? '' : ` · ${t('noPassword')}`}</span>
    <div class="row">
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
    ${events.loading && !events.data && html`<${Busy} />`}
    <${ErrorNote} error=${events.error} />
    ${events.data && !events.data.length && html`<${Empty}>${t('noEvents')}<//>`}
    <ul class="list audit">
      ${(events.data || []).map((e) => html`<li key=${e.id}>
        <span><code>${e.action}</code></span>
        <span>${e.actor_email || t('noActor')}${e.target_email && e.target_email !== e.actor_email ? ` → ${e.target_email}` : ''}</span>
        <span class="meta">${formatDate(e.created_at, lang)}</span>
      </li>`)}
    </ul>
    <div class="row">
      ${offset > 0 && html`<button type="button" onClick=${() => setOffset(Math.max(0, offset - EVENTS))}>${t('previous')}</button>`}
      ${events.data?.length === EVENTS && html`<button type="button" onClick=${() => setOffset(offset + EVENTS)}>${t('next')}</button>`}
    </div>
  </section>`;
}
