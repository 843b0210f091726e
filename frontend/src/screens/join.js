// Joining a project with an invitation's code (#/join/CODE: typed on the sign-in screen, or the link a
// teacher sent). The code's preview first (public: which project, as what); then, signed in, one click
// joins; not signed in: a new account made with the code, or a sign-in, and then the join.
import { html, useEffect } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { Busy, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';
import { PasswordForm } from './signin.js';
import { AccountForm } from './signup.js';
import { markWelcome } from './welcome.js';

// The page speaks the class's language (the project's, from the preview; `auto`: the browser's).
export function Join({ code }) {
  const { api, t, lang, signedIn, onSession, setProjectLanguage } = useApp();
  const preview = useAsync(() => api.call('joinPreview', { code }), [code]);
  const config = useAsync(() => api.call('authConfig'), []);
  useEffect(() => {
    setProjectLanguage(preview.data?.project_language ?? null); // none until the code is known
  }, [preview.data?.project_language]);
  // A new member lands on the documents with a welcome that points to Ask (welcome.js).
  const arrive = (joined) => {
    if (joined.outcome === 'joined') markWelcome(joined.project_id);
    go('p', joined.project_id, 'documents');
  };
  const join = useAction(async (client = api) => {
    arrive(await client.call('join', {}, { json: { code } }));
  }, { keepBusy: true });
  const signup = async (body) => {
    const joined = await api.call('joinSignup', {}, { json: { code, ...body } });
    arrive(joined);
    onSession(joined.session);
  };
  const p = preview.data;
  const role = p && t(`role.${p.role}`).toLowerCase();
  return html`<section class="join">
    ${preview.loading && html`<${Busy} />`}
    ${preview.error && html`<div class="card narrow">
      <h1>${t('joinTitleUnknown')}</h1>
      <p class="meta">${t('invitationCode')}: <code>${code}</code></p>
      <${ErrorNote} error=${preview.error} />
      <p><a href=${href()}>${signedIn ? t('backToProjects') : t('tryAnotherCode')}</a></p>
    </div>`}
    ${p && html`<div class="card narrow">
      <h1>${t('joinTitle', { project: p.project_name, role })}</h1>
      <p class="meta">${t('invitationCode')}: <code>${code}</code> · ${t('validUntil', { date: formatDate(p.expires_at, lang) })}</p>
      ${signedIn && html`<${ErrorNote} error=${join.error} />
        <button type="button" class="primary" disabled=${join.busy} onClick=${() => join.run()}>${t('joinProject', { project: p.project_name })}</button>`}
    </div>`}
    ${p && !signedIn && html`<div class="grid two">
      <section class="card" aria-labelledby="join-new">
        <h2 id="join-new">${t('joinNewAccount')}</h2>
        <${AccountForm} onCreate=${signup} minLength=${config.data?.password_min_length} idPrefix="join" submitLabel=${t('createAndJoin')} />
      </section>
      <section class="card" aria-labelledby="join-existing">
        <h2 id="join-existing">${t('joinExisting')}</h2>
        <${ErrorNote} error=${join.error} />
        <${PasswordForm} idPrefix="join-signin" then=${(client) => join.run(client)} />
      </section>
    </div>`}
  </section>`;
}
