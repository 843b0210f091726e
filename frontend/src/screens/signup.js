// A new account: on its own where the server allows sign-up (POST /auth/signup), or with an invitation's
// code, which is the permission to create it (POST /join/signup, the join screen). Either starts a session.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { ErrorNote, useAction, useAsync } from '../ui.js';

export function Signup() {
  const { api, t, onSession } = useApp();
  const config = useAsync(() => api.call('authConfig'), []);
  const create = async (body) => {
    const session = await api.call('signup', {}, { json: body });
    go();
    onSession(session);
  };
  return html`<section class="card narrow">
    <h1>${t('createAccount')}</h1>
    ${config.data && !config.data.signup_enabled
      ? html`<p>${t('signupClosed')}</p>`
      : html`<${AccountForm} minLength=${config.data?.password_min_length} onCreate=${create} idPrefix="signup" />`}
    <p><a href=${href()}>${t('haveAccount')}</a></p>
  </section>`;
}

// Name, email and a new password (after `children`, e.g. a token's field); `onCreate(body)` sends them.
export function AccountForm({ onCreate, minLength, idPrefix, submitLabel, children }) {
  const { t } = useApp();
  const [form, setForm] = useState({ display_name: '', email: '', password: '' });
  const set = (name) => (e) => setForm({ ...form, [name]: e.target.value });
  const { submit, busy, error } = useAction(() => onCreate({
    email: form.email.trim(),
    password: form.password,
    ...(form.display_name.trim() ? { display_name: form.display_name.trim() } : {}),
  }));
  const id = (name) => `${idPrefix}-${name}`;
  return html`<form onSubmit=${submit}>
    ${children}
    <label for=${id('name')}>${t('displayName')}</label>
    <input id=${id('name')} autocomplete="name" maxlength="200" value=${form.display_name} onInput=${set('display_name')} />
    <label for=${id('email')}>${t('email')}</label>
    <input id=${id('email')} type="email" autocomplete="email" required maxlength="254" value=${form.email} onInput=${set('email')} />
    <${NewPassword} id=${id('password')} value=${form.password} onInput=${set('password')} minLength=${minLength} />
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${submitLabel || t('createAccount')}</button>
  </form>`;
}

// A new password's field with the server's minimum length said beside it.
export function NewPassword({ id, value, onInput, minLength, label }) {
  const { t } = useApp();
  return html`<label for=${id}>${label || t('newPassword')}</label>
    <input id=${id} type="password" autocomplete="new-password" required minlength=${minLength || undefined} maxlength="1024"
      aria-describedby=${`${id}-hint`} value=${value} onInput=${onInput} />
    <p class="hint" id=${`${id}-hint`}>${minLength ? t('passwordHint', { n: minLength }) : t('passwordHintAny')}</p>`;
}
