// Screens reached by a link with a one-time token: the first run (#/setup?token=…, the token `studyai up`
// printed: creates the administrator) and a password reset (#/reset?token=…: a link an administrator made
// or mailed, the link of an account an administrator created, or one mailed by "forgot password"). Both
// start a session. The reset token is checked with a POST (never in a URL path the server logs).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, hashQuery, href } from '../router.js';
import { Busy, ErrorNote, useAction, useAsync } from '../ui.js';
import { AccountForm, NewPassword } from './signup.js';

export function Setup() {
  const { api, t, onSession } = useApp();
  const [token, setToken] = useState(() => hashQuery().get('token') || '');
  const config = useAsync(() => api.call('authConfig'), []);
  const create = async (body) => {
    const session = await api.call('setup', {}, { json: { token: token.trim(), ...body } });
    go();
    onSession(session);
  };
  return html`<section class="card narrow">
    <h1>${t('setupTitle')}</h1>
    ${config.loading && html`<${Busy} />`}
    <${ErrorNote} error=${config.error} />
    ${config.data && !config.data.setup_required
      ? html`<p>${t('setupDone')}</p><p><a href=${href()}>${t('signIn')}</a></p>`
      : config.data && html`<p>${t('setupHelp')}</p>
        <${AccountForm} minLength=${config.data.password_min_length} onCreate=${create} idPrefix="setup" submitLabel=${t('createAdmin')}>
          <label for="setup-token">${t('setupToken')}</label>
          <input id="setup-token" required autocomplete="off" spellcheck="false" value=${token} onInput=${(e) => setToken(e.target.value)} />
        <//>`}
  </section>`;
}

export function Reset() {
  const { api, t, onSession } = useApp();
  const token = hashQuery().get('token') || '';
  const [password, setPassword] = useState('');
  const config = useAsync(() => api.call('authConfig'), []);
  const check = useAsync(() => (token ? api.call('checkReset', {}, { json: { token } }) : Promise.resolve({ valid: false })), [token]);
  const { submit, busy, error } = useAction(async () => {
    const session = await api.call('reset', {}, { json: { token, password } });
    go();
    onSession(session);
  }, { keepBusy: true });
  return html`<section class="card narrow">
    <h1>${t('resetTitle')}</h1>
    ${check.loading && html`<${Busy} />`}
    <${ErrorNote} error=${check.error} />
    ${check.data && !check.data.valid && html`<p class="error" role="alert">${t('resetInvalid')}</p>
      <p><a href=${href()}>${t('signIn')}</a></p>`}
    ${check.data?.valid && html`<form onSubmit=${submit}>
      <${NewPassword} id="reset-password" value=${password} onInput=${(e) => setPassword(e.target.value)}
        minLength=${config.data?.password_min_length} />
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>${t('setPassword')}</button>
    </form>`}
  </section>`;
}
