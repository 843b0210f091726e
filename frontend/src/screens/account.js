// The caller's account: the name others see, the password, the browsers signed in (this one marked), and
// API keys for scripts. Each part is offered where the server has its routes.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { Busy, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';
import { NewPassword } from './signup.js';
import { ApiKeys } from './keys.js';

export function Account() {
  const { api, t } = useApp();
  const me = useAsync(() => (api.has('me') ? api.call('me') : Promise.resolve(null)), []);
  return html`<section>
    <h1>${t('account')}</h1>
    ${me.loading && html`<${Busy} />`}
    <${ErrorNote} error=${me.error} />
    <div class="grid two">
      <div>
        <${Profile} me=${me.data} onSaved=${me.reload} />
        ${api.has('listSessions') && html`<${Sessions} />`}
        <${ApiKeys} />
      </div>
      ${api.has('changePassword') && !me.loading && html`<${ChangePassword} hasPassword=${me.data?.has_password ?? true} />`}
    </div>
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

function ChangePassword({ hasPassword }) {
  const { api, t } = useApp();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const config = useAsync(() => api.call('authConfig'), []);
  const { submit, busy, error } = useAction(async () => {
    setDone(false);
    const body = { new_password: next, ...(hasPassword ? { current_password: current } : {}) };
    await api.call('changePassword', {}, { json: body, own401: true });
    setCurrent('');
    setNext('');
    setDone(true);
  });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="password-title">
    <h2 id="password-title">${hasPassword ? t('changePassword') : t('setPassword')}</h2>
    ${hasPassword && html`<label for="current-password">${t('currentPassword')}</label>
      <input id="current-password" type="password" autocomplete="current-password" required maxlength="1024"
        value=${current} onInput=${(e) => setCurrent(e.target.value)} />`}
    <${NewPassword} id="new-password" value=${next} onInput=${(e) => setNext(e.target.value)} minLength=${config.data?.password_min_length} />
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${t('changePassword')}</button>
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
