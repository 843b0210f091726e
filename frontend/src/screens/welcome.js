// A newly joined member's welcome (issue 42): on the project's documents, a word of welcome and a pointer to
// Ask. The join screen marks the project in localStorage (no secret: only that a welcome waits, so it
// survives a reload); dismissing it, or following the pointer, removes the mark and it is not shown again.
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { href } from '../router.js';

const PREFIX = 'studyai.welcome.';

function stored(act) {
  try {
    return act(localStorage);
  } catch {
    return null; // storage blocked (a private window's settings): no welcome, never an error
  }
}

// After a join that made the caller a new member (`outcome` joined).
export function markWelcome(projectId) {
  stored((s) => s.setItem(PREFIX + projectId, '1'));
}

export function Welcome() {
  const { t, projectId, project } = useApp();
  const [shown, setShown] = useState(() => stored((s) => s.getItem(PREFIX + projectId)) === '1');
  if (!shown) return null;
  const dismiss = () => {
    stored((s) => s.removeItem(PREFIX + projectId));
    setShown(false);
  };
  return html`<section class="card welcome" aria-labelledby="welcome-title">
    <h2 id="welcome-title">${t('welcomeTitle', { project: project?.name || '' })}</h2>
    <p>${t('welcomeText', { ask: t('tab.ask') })}</p>
    <div class="row">
      <a class="button primary" href=${href('p', projectId, 'ask')} onClick=${dismiss}>${t('welcomeAsk')}</a>
      <button type="button" onClick=${dismiss}>${t('welcomeDismiss')}</button>
    </div>
  </section>`;
}
