// The caller's account: the personal invitations waiting for it (accepted or declined here), the name
// others see, the school login to link where the server has one, the password, the browsers signed in
// (this one marked), and API keys for scripts. Each part is offered where the server has its routes.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, hashQuery } from '../router.js';
import { Busy, Empty, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';
import { NewPassword } from './signup.js';
import { ApiKeys } from './keys.js';

export function Account() {
  const { api, t } = useApp();
  const me = useAsync(() => (api.has('me') ? api.call('me') : Promise.resolve(null)), []);
  const config = useAsync(() => api.call('authConfig'), []);
  const [keysShown, setKeysShown] = useState(0); // a password change revokes the keys: the list again
  const loaded = me.data !== undefined || me.error;
  const passwordChanged = () => {
    setKeysShown(keysShown + 1);
    me.reload(); // a first password: the form asks for the current one from now on
  };
  return html`<section>
    <h1>${t('account')}</h1>
    ${me.loading && !loaded && html`<${Busy} />`}
    <${ErrorNote} error=${me.error} />
    <div class="grid two">
      <div>
        ${api.has('myInvitations') && html`<${MyInvitations} verified=${me.data?.email_verified !== false} />`}
        <${Profile} me=${me.data} onSaved=${me.reload} />
        <${SchoolLogin} me=${me.data} config=${config.data} />
        ${api.has('listSessions') && html`<${Sessions} />`}
        <${ApiKeys} key=${keysShown} />
      </div>
      ${api.has('changePassword') && loaded && html`<${ChangePassword} hasPassword=${me.data?.has_password ?? true}
        minLength=${config.data?.password_min_length} onChanged=${passwordChanged} />`}
    </div>
  </section>`;
}

// Personal invitations to projects, sent to this account's email by a project's owner: accepting one joins
// the project (and opens it), declining removes it. They reach only an account whose address is proven
// (made by an administrator, signed in with the school login, or a reset link used): the note says so.
function MyInvitations({ verified }) {
  const { api, t, lang } = useApp();
  const list = useAsync(() => api.call('myInvitations'), []);
  const accept = useAction(async (invitation) => {
    const joined = await api.call('acceptInvitation', { invitation_id: invitation.id });
    go('p', joined.project_id, 'documents');
  }, { keepBusy: true });
  const decline = useAction(async (invitation) => {
    await api.call('declineInvitation', { invitation_id: invitation.id });
    list.reload();
  });
  const busy = accept.busy || decline.busy;
  return html`<section class="card" aria-labelledby="my-invitations-title">
    <h2 id="my-invitations-title">${t('myInvitations')}</h2>
    ${list.loading && !list.data && html`<${Busy} />`}
    <${ErrorNote} error=${list.error || accept.error || decline.error} />
    ${list.data && !list.data.length && html`<${Empty}>${t('noMyInvitations')}<//>`}
    ${!verified && html`<p class="hint">${t('invitationsNeedProvenEmail')}</p>`}
    <ul class="list my-invitations">
      ${(list.data || []).map((inv) => html`<li key=${inv.id} class="invitation" data-project=${inv.project_name}>
        <p><strong>${inv.project_name}</strong> <span class="badge">${t(`role.${inv.role}`)}</span></p>
        <p class="meta">${inv.invited_by ? `${t('invitedBy', { name: inv.invited_by })} · ` : ''}${t('validUntil', { date: formatDate(inv.expires_at, lang) })}</p>
        <div class="row">
          <button type="button" class="primary" disabled=${busy} onClick=${() => accept.run(inv)}
            aria-label=${`${t('accept')}: ${inv.project_name}`}>${t('accept')}</button>
          <button type="button" disabled=${busy} onClick=${() => decline.run(inv)}
            aria-label=${`${t('decline')}: ${inv.project_name}`}>${t('decline')}</button>
        </div>
      </li>`)}
    </ul>
  </section>`;
}

function Profile({ me, onSaved }) {
  const { api, t, user, lang, refreshUser } = useApp();
  const [name, setName] = useState(null);
  const [saved, setSaved] = useState(false);
  const shown = name ?? me?.display_name ?? user?.display_name ?? '';
  const { submit, busy, error } = useAction(async () => {
    await api.call('updateMe', {}, { json: { display_name: shown.trim() || null } });
    setSaved(true);
    onSaved();
    refreshUser();
  });
  return html`<section class="card" aria-labelledby="profile-title">
    <h2 id="profile-title">${t('profile')}</h2>
    <p>${t('email')}: <strong>${me?.email || user?.email}</strong></p>
    ${me && html`<p class="meta">${t('memberSince', { date: formatDate(me.created_at, lang) })}</p>`}
    ${api.has('updateMe') && html`<form onSubmit=${submit}>
      <label for="display-name">${t('displayName')}</label>
      <input id="display-name" autocomplete="name" maxlength="200" value=${shown} onInput=${(e) => { setName(e.target.value); setSaved(false); }} />
      <${ErrorNote} error=${error} />
      <div class="row">
        <button type="submit" class="primary" disabled=${busy}>${t('save')}</button>
        ${saved && html`<span role="status">${t('saved')}</span>`}
      </div>
    </form>`}
  </section>`;
}

// Where the server has a school login (OIDC) and none is linked to this account: POST /auth/oidc/link (the
// session's CSRF token proves this is the signed-in app asking) answers the provider's address, and the
// browser goes there; the school login it comes back with is linked to the signed-in account, and it lands
// here (#/account, or #/signin?error=REASON when it failed). Only a browser session can link.
function SchoolLogin({ me, config }) {
  const { api, t, viaSession } = useApp();
  const failed = hashQuery().get('error');
  const { submit, busy, error } = useAction(async () => {
    const started = await api.call('linkSchoolLogin');
    window.location.assign(started.url);
  }, { keepBusy: true });
  if (!config?.oidc_enabled || !viaSession || me?.school_login !== false) return null;
  const name = config.oidc_name || t('sso');
  return html`<section class="card" aria-labelledby="school-login-title">
    <h2 id="school-login-title">${t('schoolLogin')}</h2>
    ${failed && html`<p class="error" role="alert">${t('oidcFailed', { reason: t(`oidcError.${failed}`, {}, failed) })}</p>`}
    <p class="hint">${t('linkSchoolLoginHelp', { name })}</p>
    <${ErrorNote} error=${error} />
    <form onSubmit=${submit}><button type="submit" disabled=${busy}>${t('linkSchoolLogin')}</button></form>
  </section>`;
}

// A first password (an account made by the school login or the LMS) needs a recent school sign-in: the
// server refuses it with 403 and says what to do, shown as it is.
function ChangePassword({ hasPassword, minLength, onChanged }) {
  const { api, t } = useApp();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const { submit, busy, error } = useAction(async () => {
    setDone(false);
    const body = { new_password: next, ...(hasPassword ? { current_password: current } : {}) };
    await api.call('changePassword', {}, { json: body, own401: true });
    setCurrent('');
    setNext('');
    setDone(true);
    onChanged();
  });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="password-title">
    <h2 id="password-title">${hasPassword ? t('changePassword') : t('setPassword')}</h2>
    ${hasPassword && html`<label for="current-password">${t('currentPassword')}</label>
      <input id="current-password" type="password" autocomplete="current-password" required maxlength="1024"
        value=${current} onInput=${(e) => setCurrent(e.target.value)} />`}
    <${NewPassword} id="new-password" value=${next} onInput=${(e) => setNext(e.target.value)} minLength=${minLength} />
    <p class="hint">${t(hasPassword ? 'passwordChangeEffects' : 'firstPasswordHelp')}</p>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${hasPassword ? t('changePassword') : t('setPassword')}</button>
    ${done && html`<p role="status">${t('passwordChanged')}</p>`}
  </form>`;
}

// "Firefox on Windows" from a User-Agent header (the whole header stays in the tooltip).
const BROWSERS = [[/Edg\//, 'Edge'], [/Firefox\//, 'Firefox'], [/Chrom(e|ium)\//, 'Chrome'], [/Safari\//, 'Safari']];
const SYSTEMS = [[/Android/, 'Android'], [/iPhone|iPad/, 'iOS'], [/Windows/, 'Windows'], [/Mac OS X/, 'macOS'], [/CrOS/, 'ChromeOS'], [/Linux/, 'Linux']];
function describeAgent(agent) {
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
  return browser && system ? `${browser} · ${system}` : browser || system || agent;
}

function Sessions() {
  const { api, t, lang } = useApp();
  const list = useAsync(() => api.call('listSessions'), []);
  const { run, error } = useAction(async (id) => {
    await api.call('revokeSession', { session_id: id });
    list.reload();
  });
  return html`<section class="card" aria-labelledby="sessions-title">
    <h2 id="sessions-title">${t('sessions')}</h2>
    ${list.loading && !list.data && html`<${Busy} />`}
    <${ErrorNote} error=${list.error || error} />
    <ul class="list sessions">
      ${(list.data || []).map((s) => html`<li key=${s.id} data-current=${s.current ? 'true' : undefined}>
        <span><strong title=${s.user_agent || undefined}>${s.user_agent ? describeAgent(s.user_agent) : t('unknownBrowser')}</strong>
          ${s.current && html` <span class="badge ok">${t('thisBrowser')}</span>`}</span>
        <span class="meta">${t(`via.${s.via}`, {}, s.via)} · ${s.address || ''} · ${t('lastSeen', { date: formatDate(s.last_seen_at || s.created_at, lang) })}</span>
        ${!s.current && html`<button type="button" class="link danger" onClick=${() => run(s.id)}
          aria-label=${`${t('signOutSession')}: ${s.user_agent ? describeAgent(s.user_agent) : s.id}`}>${t('signOutSession')}</button>`}
      </li>`)}
    </ul>
  </section>`;
}
