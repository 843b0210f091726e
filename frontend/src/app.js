// The shell: sign-in with an API key (kept in sessionStorage: this tab only, gone when it closes), the
// header, and the screen the hash route names. Language: the project's (`pt`/`en`), else the browser's.
import { html, useEffect, useMemo, useState } from './lib.js';
import { Api } from './api.js';
import { AppContext } from './context.js';
import { browserLanguage, translator } from './i18n.js';
import { useRoute, href } from './router.js';
import { SignIn } from './screens/signin.js';
import { Projects } from './screens/projects.js';
import { ProjectScreen } from './screens/project.js';

const KEY = 'studyai.key';

export function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY));
  const [api, setApi] = useState(null);
  const [specReady, setSpecReady] = useState(false);
  const [projectLanguage, setProjectLanguage] = useState(null);
  const route = useRoute();
  const lang = projectLanguage && projectLanguage !== 'auto' ? projectLanguage : browserLanguage();
  const t = useMemo(() => translator(lang), [lang]);

  const signOut = () => {
    sessionStorage.removeItem(KEY);
    setKey(null);
    setApi(null);
    setSpecReady(false);
  };

  useEffect(() => {
    if (!key) return;
    const client = new Api(key, { onUnauthorized: signOut });
    setApi(client);
    setSpecReady(false);
    // Only a project's screens need to know which optional routes the server has: the project list
    // does not wait for the spec.
    client.loadSpec().then(() => setSpecReady(true));
  }, [key]);

  useEffect(() => {
    document.documentElement.lang = lang === 'pt' ? 'pt-BR' : 'en';
  }, [lang]);

  useEffect(() => {
    if (route[0] !== 'p') setProjectLanguage(null);
  }, [route[0]]);

  const context = { api, t, lang, setProjectLanguage, signOut };

  let screen;
  if (!key) {
    screen = html`<${SignIn} onKey=${(k) => { sessionStorage.setItem(KEY, k); setKey(k); }} />`;
  } else if (!api || (route[0] === 'p' && !specReady)) {
    screen = html`<p class="busy" role="status">${t('loading')}</p>`;
  } else if (route[0] === 'p' && route[1]) {
    screen = html`<${ProjectScreen} key=${route[1]} projectId=${route[1]} tab=${route[2]} item=${route[3]} />`;
  } else {
    screen = html`<${Projects} />`;
  }

  return html`<${AppContext.Provider} value=${context}>
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>${t('skip')}</a>
    <header class="top">
      <a class="brand" href=${href()}>studyAI</a>
      ${key && html`<button type="button" class="link" onClick=${signOut}>${t('signOut')}</button>`}
    </header>
    <main id="main" tabindex="-1">${screen}</main>
  <//>`;
}
