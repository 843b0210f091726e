// An owner's invitations (next to Members): a code or a link that makes whoever joins with it a member
// with its role, until it expires, runs out of uses or is revoked. Sending it by email is offered where
// the server has the route (and answers 409 where no mail server is configured).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { ErrorNote, ListState, formatDate, useAction, useAsync } from '../ui.js';

const ROLES = ['viewer', 'editor', 'owner'];

export function Invitations() {
  const { api, t, projectId } = useApp();
  const list = useAsync(() => api.call('listInvitations', { project_id: projectId }), [projectId]);
  const [fresh, setFresh] = useState(null);
  const onCreated = (invitation) => {
    setFresh(invitation.id);
    list.reload();
  };
  return html`<div class="grid two">
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">${t('invitations')}</h2>
      <p class="hint">${t('invitationsHelp')}</p>
      <${ListState} list=${list} empty=${t('noInvitations')} />
      <ul class="list invitations">
        ${(list.data || []).map((inv) => html`<${InvitationRow} key=${inv.id} invitation=${inv} fresh=${inv.id === fresh} onChanged=${list.reload} />`)}
      </ul>
    </section>
    <${NewInvitation} onCreated=${onCreated} />
  </div>`;
}

function state(inv) {
  if (inv.revoked_at) return 'revoked';
  if (new Date(inv.expires_at) <= new Date()) return 'expired';
  if (inv.uses >= inv.max_uses) return 'used';
  return 'active';
}

function InvitationRow({ invitation: inv, fresh, onChanged }) {
  const { api, t, lang, projectId } = useApp();
  const [copied, setCopied] = useState(false);
  const status = state(inv);
  const { run, error } = useAction(async () => {
    await api.call('revokeInvitation', { project_id: projectId, invitation_id: inv.id });
    onChanged();
  });
  const copy = async (e) => {
    const field = e.target.closest('li').querySelector('input.link-field');
    try {
      await navigator.clipboard.writeText(inv.link);
    } catch {
      field.select(); // no clipboard permission: the link is selected, for Ctrl+C
      document.execCommand('copy');
    }
    setCopied(true);
  };
  const linkId = `invitation-link-${inv.id}`;
  return html`<li class=${`invitation${fresh ? ' fresh' : ''}`} data-code=${inv.code}>
    <p class="invitation-code"><code>${inv.code}</code>
      <span class="badge">${t(`role.${inv.role}`)}</span>
      <span class=${`badge invitation-${status}`}>${t(`invitation.${status}`)}</span></p>
    <p class="meta">${t('invitationUses', { uses: inv.uses, max: inv.max_uses })} · ${t('validUntil', { date: formatDate(inv.expires_at, lang) })}</p>
    ${status === 'active' && html`<div class="row nowrap">
        <label class="visually-hidden" for=${linkId}>${t('invitationLink', { code: inv.code })}</label>
        <input id=${linkId} class="link-field" readonly value=${inv.link} onFocus=${(e) => e.target.select()} />
        <button type="button" class="copy" onClick=${copy} aria-label=${`${copied ? t('copied') : t('copyLink')}: ${inv.code}`}>${copied ? t('copied') : t('copyLink')}</button>
      </div>
      ${copied && html`<span class="visually-hidden" role="status">${t('copied')}</span>`}
      <div class="row">
        <button type="button" class="link danger" onClick=${() => confirm(t('confirmRevoke', { code: inv.code })) && run()}
          aria-label=${`${t('revoke')}: ${inv.code}`}>${t('revoke')}</button>
      </div>
      ${api.has('emailInvitation') && html`<${EmailInvitation} invitation=${inv} />`}`}
    <${ErrorNote} error=${error} />
  </li>`;
}

function EmailInvitation({ invitation: inv }) {
  const { api, t, projectId } = useApp();
  const [emails, setEmails] = useState('');
  const [sent, setSent] = useState(null);
  const { submit, busy, error } = useAction(async () => {
    const list = emails.split(/[\s,;]+/).map((e) => e.trim()).filter(Boolean);
    const result = await api.call('emailInvitation', { project_id: projectId, invitation_id: inv.id }, { json: { emails: list } });
    setSent(result.sent);
    setEmails('');
  });
  const id = `invitation-emails-${inv.id}`;
  return html`<details class="email-invitation">
    <summary>${t('emailIt')}</summary>
    <form onSubmit=${submit}>
      <label for=${id}>${t('emailAddresses')}</label>
      <textarea id=${id} rows="2" required value=${emails} onInput=${(e) => setEmails(e.target.value)}></textarea>
      <p class="hint">${t('emailAddressesHint')}</p>
      <${ErrorNote} error=${error} />
      <button type="submit" disabled=${busy}>${t('send')}</button>
      ${sent !== null && html`<span role="status">${t('emailsSent', { n: sent })}</span>`}
    </form>
  </details>`;
}

function NewInvitation({ onCreated }) {
  const { api, t, projectId } = useApp();
  const [form, setForm] = useState({ role: 'viewer', hours: '', maxUses: '100' });
  const set = (name) => (e) => setForm({ ...form, [name]: e.target.value });
  const { submit, busy, error } = useAction(async () => {
    const { role, hours, maxUses } = form;
    const body = { role, max_uses: Number(maxUses) || 100, ...(hours ? { expires_in_hours: Number(hours) } : {}) };
    onCreated(await api.call('createInvitation', { project_id: projectId }, { json: body }));
  });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-invitation">
    <h3 id="new-invitation">${t('newInvitation')}</h3>
    <label for="invitation-role">${t('role')}</label>
    <select id="invitation-role" value=${form.role} onChange=${set('role')}>
      ${ROLES.map((r) => html`<option key=${r} value=${r}>${t(`role.${r}`)}</option>`)}
    </select>
    <label for="invitation-hours">${t('expiresInHours')}</label>
    <input id="invitation-hours" type="number" min="1" max="8760" value=${form.hours} onInput=${set('hours')}
      aria-describedby="invitation-hours-hint" />
    <p class="hint" id="invitation-hours-hint">${t('expiresInHoursHint')}</p>
    <label for="invitation-uses">${t('maxUses')}</label>
    <input id="invitation-uses" type="number" min="1" max="10000" required value=${form.maxUses} onInput=${set('maxUses')} />
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${t('createInvitation')}</button>
  </form>`;
}
