// Sign-in with an API key (`studyai users create EMAIL` prints one). It is checked against the API once
// and then kept in sessionStorage only: this tab, until it closes.
import { html, useState } from '../lib.js';
import { Api } from '../api.js';
import { useApp } from '../context.js';
import { ErrorNote, useAction } from '../ui.js';

export function SignIn({ onKey }) {
  const { t } = useApp();
  const [key, setKey] = useState('');
  const { submit, busy, error } = useAction(async () => {
    try {
      await new Api(key.trim()).call('listProjects', {}, { query: { limit: 1 } });
    } catch (err) {
      throw err.status === 401 ? new Error(t('badKey')) : err;
    }
    onKey(key.trim());
  });
  return html`<section class="card narrow signin">
    <h1>${t('signInTitle')}</h1>
    <p>${t('signInHelp')}</p>
    <form onSubmit=${submit}>
      <label for="api-key">${t('apiKey')}</label>
      <input id="api-key" name="api-key" type="password" autocomplete="current-password" required
        value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="sk-studyai-…" />
      <p class="hint">${t('keyKept')}</p>
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>${busy ? t('checking') : t('signIn')}</button>
    </form>
  </section>`;
}
