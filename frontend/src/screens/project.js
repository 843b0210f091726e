// One project: its tabs, each a screen. The caller's role (from the project) decides what is offered;
// the API enforces it anyway (viewers get 403 on writes).
import { html, useEffect } from '../lib.js';
import { AppContext, useApp } from '../context.js';
import { href } from '../router.js';
import { Busy, ErrorNote, useAsync } from '../ui.js';
import { Documents } from './documents.js';
import { Ask } from './ask.js';
import { Plans } from './plans.js';
import { Study } from './study.js';
import { Teacher } from './teacher.js';
import { Members } from './members.js';
import { Invitations } from './invitations.js';
import { Viewer } from './viewer.js';
import { MindMap } from './mindmap.js';
import { AudioOverviews } from './audio.js';

export function ProjectScreen({ projectId, tab = 'documents', item, rest }) {
  const app = useApp();
  const { api, t, setProjectLanguage } = app;
  const project = useAsync(() => api.call('getProject', { project_id: projectId }), [projectId]);
  useEffect(() => {
    if (project.data) setProjectLanguage(project.data.language);
  }, [project.data?.language]);
  if (!project.data) {
    return html`${project.loading ? html`<${Busy} />` : ''}<${ErrorNote} error=${project.error} />
      <p><a href=${href()}>${t('backToProjects')}</a></p>`;
  }
  const role = project.data.role;
  const inviter = role === 'owner' && api.has('listInvitations');
  const writer = role === 'owner' || role === 'editor';
  const tabs = [
    ['documents', t('tab.documents')],
    ['ask', t('tab.ask')],
    ['plans', t('tab.plans')],
    ['map', t('tab.map')],
    ['audio', t('tab.audio')],
    ['study', t('tab.study')],
    ...(writer ? [['teacher', t('tab.teacher')]] : []),
    ['members', t('tab.members')],
    ...(inviter ? [['invitations', t('tab.invitations')]] : []),
  ];
  const context = { ...app, projectId, project: project.data, role, writer, owner: role === 'owner', reloadProject: project.reload };
  const screens = { documents: Documents, ask: Ask, plans: Plans, map: MindMap, audio: AudioOverviews, study: Study, teacher: Teacher, members: Members,
    ...(inviter ? { invitations: Invitations } : {}), doc: Viewer }; // doc: a cited spot, opened from a citation
  const Screen = screens[tab] || Documents;
  return html`<${AppContext.Provider} value=${context}>
    <div class="project-head">
      <p class="crumbs"><a href=${href()}>${t('projects')}</a> ›</p>
      <h1>${project.data.name}</h1>
      <span class="badge">${t(`role.${role}`)}</span>
    </div>
    <nav class="tabs" aria-label=${t('projectSections')}>
      ${tabs.map(
        ([id, label]) => html`<a key=${id} href=${href('p', projectId, id)} aria-current=${id === tab ? 'page' : undefined}>${label}</a>`,
      )}
    </nav>
    <${Screen} item=${item} rest=${rest} />
  <//>`;
}
