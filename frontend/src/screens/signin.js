// The way in: email and password (a browser session in an HttpOnly cookie), "forgot your password?" where
// the server can mail (#/forgot), the school's single sign-on where the server has one (a plain link: the
// server redirects to the provider and back), a code from a teacher, a new account where the server allows
// sign-up. An API key (`studyai users create EMAIL`
// prints one) stays a small option for developers: checked once, then kept in sessionStorage only.
import { html, useEffect, useRef, useState } from '../lib.js';
import { Api } from '../api.js';
import { useApp } from '../context.js';
import { go, hashQuery, href } from '../router.js';
import { ErrorNote, useAction, useAsync } from '../ui.js';

export function SignIn({ notice }) {
  const { api, t } = useApp();
  const [withKey, setWithKey] = useState(false);
  const config = useAsync(() => api.call('authConfig'), []);
  const oidcError = hashQuery().get('error');
  const c = config.data;
  return html`<section class="card narrow signin">
    <h1>${t('signInTitle')}</h1>
    ${notice && html`<p class="notice" role="status">${t(notice)}</p>`}
    ${oidcError && html`<p class="error" role="alert">${t('oidcFailed', { reason: t(`oidcError.${oidcError}`, {}, oidcError) })}</p>`}
    ${c?.setup_required && html`<p class="notice">${t('setupNeeded')}</p>`}
    ${withKey
      ? html`<${KeyForm} onBack=${() => setWithKey(false)} />`
      : html`<${PasswordForm} />
        ${c?.mail_enabled && html`<p class="forgot"><a href=${href('forgot')}>${t('forgotPassword')}</a></p>`}
        ${c?.oidc_enabled && html`<p class="or">${t('or')}</p>
          <a class="button wide" href="/auth/oidc/login?next=/app/">${t('signInWith', { name: c.oidc_name || t('sso') })}</a>`}
        <${CodeForm} />
        ${c?.signup_enabled && html`<p>${t('noAccount')} <a href=${href('signup')}>${t('createAccount')}</a></p>`}
        <p class="hint">${t('developers')}
          <button type="button" class="link" onClick=${() => setWithKey(true)}>${t('useKey')}</button></p>`}
  </section>`;
}

// Email and password; `then` runs after the session starts (the join screen joins then).
export function PasswordForm({ then, idPrefix = 'signin' }) {
  const { api, t, onSession } = useApp();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { submit, busy, error } = useAction(async () => {
    let session;
    try {
      session = await api.call('login', {}, { json: { email: email.trim(), password } });
    } catch (err) {
      throw err.status === 401 ? new Error(t('badPassword')) : err;
    }
    const client = new Api(null, { csrf: session.csrf_token });
    client.spec = api.spec;
    client.language = api.language;
    if (then) await then(client);
    onSession(session);
  });
  return html`<form onSubmit=${submit}>
    <label for=${`${idPrefix}-email`}>${t('email')}</label>
    <input id=${`${idPrefix}-email`} type="email" autocomplete="username" required maxlength="254"
      value=${email} onInput=${(e) => setEmail(e.target.value)} />
    <label for=${`${idPrefix}-password`}>${t('password')}</label>
    <input id=${`${idPrefix}-password`} type="password" autocomplete="current-password" required maxlength="1024"
      value=${password} onInput=${(e) => setPassword(e.target.value)} />
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${busy ? t('checking') : t('signIn')}</button>
  </form>`;
}

// "Forgot your password?" (#/forgot): the email, and the server mails a reset link to the account that has
// it. The answer is the same whatever the email (202 and the server's sentence, shown as it is): nothing
// here tells whether an account has this address.
export function Forgot() {
  const { api, t } = useApp();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(null);
  const { submit, busy, error } = useAction(async () => {
    setSent(null);
    const answer = await api.call('forgot', {}, { json: { email: email.trim() } });
    setSent(answer?.detail || t('forgotSent'));
  });
  return html`<section class="card narrow">
    <h1>${t('forgotTitle')}</h1>
    <p class="hint" id="forgot-hint">${t('forgotHelp')}</p>
    <form onSubmit=${submit}>
      <label for="forgot-email">${t('email')}</label>
      <input id="forgot-email" type="email" autocomplete="username" required maxlength="254" aria-describedby="forgot-hint"
        value=${email} onInput=${(e) => setEmail(e.target.value)} />
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>${t('sendResetLink')}</button>
    </form>
    ${sent !== null && html`<p class="notice" role="status">${sent}</p>`}
    <p><a href=${href()}>${t('backToSignIn')}</a></p>
  </section>`;
}

function CodeForm() {
  const { t } = useApp();
  const [code, setCode] = useState('');
  const open = (e) => {
    e.preventDefault();
    if (code.trim()) go('join', code.trim());
  };
  return html`<form class="join-code" onSubmit=${open} aria-labelledby="join-code-title">
    <h2 id="join-code-title">${t('joinWithCode')}</h2>
    <label for="join-code">${t('invitationCode')}</label>
    <div class="row nowrap">
      <input id="join-code" required maxlength="64" autocomplete="off" spellcheck="false" placeholder="ABCDE-23456"
        value=${code} onInput=${(e) => setCode(e.target.value)} />
      <button type="submit">${t('continue')}</button>
    </div>
  </form>`;
}

function KeyForm({ onBack }) {
  const { t, onKey } = useApp();
  const [key, setKey] = useState('');
  const field = useRef(null);
  useEffect(() => field.current?.focus(), []);
  const { submit, busy, error } = useAction(async () => {
    try {
      await new Api(key.trim()).call('listProjects', {}, { query: { limit: 1 } });
    } catch (err) {
      throw err.status === 401 ? new Error(t('badKey')) : err;
    }
    onKey(key.trim());
  });
  return html`<form onSubmit=${submit}>
    <p>${t('signInHelp')}</p>
    <label for="api-key">${t('apiKey')}</label>
    <input id="api-key" name="api-key" type="password" autocomplete="current-password" required ref=${field}
      value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="sk-studyai-…" />
    <p class="hint">${t('keyKept')}</p>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${busy ? t('checking') : t('signIn')}</button>
    <button type="button" class="link" onClick=${onBack}>${t('backToPassword')}</button>
  </form>`;
}
