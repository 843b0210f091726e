// The caller's projects, a line when personal invitations wait on the Account screen, and a new project
// (name, language) where the server lets this account create one (`can_create_projects`: with
// PROJECT_CREATORS=teachers only teachers and administrators do; the others read why).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { href, go } from '../router.js';
import { Busy, Empty, ErrorNote, useAction, useAsync } from '../ui.js';

export function Projects() {
  const { api, t, user } = useApp();
  const projects = useAsync(() => api.all('listProjects', {}, { pageSize: 500 }), []);
  const creates = user?.can_create_projects !== false;
  return html`<section>
    <h1>${t('projects')}</h1>
    ${api.has('myInvitations') && html`<${WaitingInvitations} />`}
    <div class="grid two">
      <div>
        ${projects.loading && !projects.data && html`<${Busy} />`}
        <${ErrorNote} error=${projects.error} />
        ${projects.data && !projects.data.length && html`<${Empty}>${t(creates ? 'noProjects' : 'noProjectsJoin')}<//>`}
        <ul class="list projects">
          ${(projects.data || []).map(
            (p) => html`<li key=${p.id}>
              <a href=${href('p', p.id, 'documents')}><strong>${p.name}</strong></a>
              <span class="meta">${t(`role.${p.role}`)} · ${t(`lang.${p.language}`)}</span>
              ${p.description && html`<p class="meta">${p.description}</p>`}
            </li>`,
          )}
        </ul>
      </div>
      ${creates ? html`<${NewProject} />` : html`<p class="notice" data-testid="teachers-create">${t('teachersCreateProjects')}</p>`}
    </div>
  </section>`;
}

// Personal invitations sent to this account's email: said here, where a person lands after signing in;
// they are accepted or declined on the Account screen.
function WaitingInvitations() {
  const { api, t } = useApp();
  const waiting = useAsync(() => api.call('myInvitations'), []);
  const n = waiting.data?.length || 0;
  if (!n) return null;
  return html`<p class="notice">${t(n === 1 ? 'invitationsWaitingOne' : 'invitationsWaiting', { n })}
    <a href=${href('account')}>${t('seeInvitations')}</a></p>`;
}

function NewProject() {
  const { api, t } = useApp();
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('auto');
  const [description, setDescription] = useState('');
  const { submit, busy, error } = useAction(async () => {
    const project = await api.call('createProject', {}, { json: { name: name.trim(), language, description } });
    go('p', project.id, 'documents');
  }, { keepBusy: true });
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-project">
    <h2 id="new-project">${t('newProject')}</h2>
    <label for="project-name">${t('name')}</label>
    <input id="project-name" required maxlength="200" value=${name} onInput=${(e) => setName(e.target.value)} />
    <label for="project-language">${t('language')}</label>
    <select id="project-language" value=${language} onChange=${(e) => setLanguage(e.target.value)}>
      <option value="auto">${t('lang.auto')}</option>
      <option value="pt">${t('lang.pt')}</option>
      <option value="en">${t('lang.en')}</option>
    </select>
    <label for="project-description">${t('description')}</label>
    <textarea id="project-description" maxlength="5000" rows="2" value=${description}
      onInput=${(e) => setDescription(e.target.value)}></textarea>
    <${ErrorNote} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>${t('create')}</button>
  </form>`;
}
