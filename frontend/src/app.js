// The shell: who is signed in, the header, and the screen the hash route names. Two ways in: a browser
// session (password, single sign-on, an invitation: an HttpOnly cookie the app never reads; GET
// /auth/session at start says whether there is one, and its CSRF token stays in memory), or an API key
// for developers (kept in sessionStorage: this tab only, gone when it closes). Language: the project's
// (`pt`/`en`), else the browser's.
import { html, useEffect, useMemo, useState } from './lib.js';
import { Api } from './api.js';
import { AppContext } from './context.js';
import { browserLanguage, translator } from './i18n.js';
import { useRoute, href, go } from './router.js';
import { Forgot, SignIn } from './screens/signin.js';
import { Signup } from './screens/signup.js';
import { Setup, Reset } from './screens/first_run.js';
import { Join } from './screens/join.js';
import { Account } from './screens/account.js';
import { Admin } from './screens/admin.js';
import { Projects } from './screens/projects.js';
import { ProjectScreen } from './screens/project.js';

const KEY = 'studyai.key';

export function App() {
  // {mode: 'checking' | 'out' | 'key' | 'session', key?, session?, notice?}; `user` is the signed-in account.
  const [auth, setAuth] = useState(() => {
    const key = sessionStorage.getItem(KEY);
    return key ? { mode: 'key', key } : { mode: 'checking' };
  });
  const [user, setUser] = useState(null);
  const [spec, setSpec] = useState(null);
  const [projectLanguage, setProjectLanguage] = useState(null);
  const route = useRoute();
  const lang = projectLanguage && projectLanguage !== 'auto' ? projectLanguage : browserLanguage();
  const t = useMemo(() => translator(lang), [lang]);

  const signedOut = (notice = null) => {
    sessionStorage.removeItem(KEY);
    setUser(null);
    setAuth({ mode: 'out', notice });
  };
  // A 401 mid-use: the key was revoked (as before: back to sign-in), or the session ended (said so).
  const ended = (mode) => () => signedOut(mode === 'session' ? 'sessionEnded' : null);

  const api = useMemo(() => {
    const client =
      auth.mode === 'key'
        ? new Api(auth.key, { onUnauthorized: ended('key') })
        : auth.mode === 'session'
          ? new Api(null, { csrf: auth.session.csrf_token, onUnauthorized: ended('session') })
          : new Api(null);
    client.spec = spec;
    return client;
  }, [auth, spec]);
  api.language = lang; // the server says its refusals in the language the app shows

  // The routes the server has (public): which optional screens to offer.
  useEffect(() => {
    new Api(null).loadSpec().then((loaded) => setSpec(loaded.spec));
  }, []);

  // At start: is this browser signed in? (A key's account, too: whether it administers the server.)
  useEffect(() => {
    if (auth.mode === 'checking') {
      new Api(null)
        .call('session')
        .then((session) => setAuth({ mode: 'session', session }))
        .catch(() => setAuth({ mode: 'out' }));
    } else if (auth.mode === 'session') {
      setUser(auth.session.user);
    } else if (auth.mode === 'key') {
      api.call('session').then((s) => setUser(s.user)).catch(() => setUser(null));
    }
  }, [auth]);

  useEffect(() => {
    document.documentElement.lang = lang === 'pt' ? 'pt-BR' : 'en';
  }, [lang]);

  useEffect(() => {
    if (route[0] !== 'p' && route[0] !== 'projects') setProjectLanguage(null);
  }, [route[0]]);

  const onSession = (session) => setAuth({ mode: 'session', session });
  const onKey = (key) => {
    sessionStorage.setItem(KEY, key);
    setAuth({ mode: 'key', key });
  };
  const signOut = async () => {
    if (auth.mode === 'session') await api.call('logout').catch(() => {});
    signedOut();
    go();
  };
  const refreshUser = () => api.call('session').then((s) => setUser(s.user)); // after a rename
  const signedIn = auth.mode === 'key' || auth.mode === 'session';
  const viaSession = auth.mode === 'session'; // a browser session (cookie), not an API key
  const context = { api, t, lang, setProjectLanguage, signOut, signedIn, viaSession, user, refreshUser, onSession, onKey };

  let screen;
  if (auth.mode === 'checking') {
    screen = html`<p class="busy" role="status">${t('loading')}</p>`;
  } else if (route[0] === 'join' && route[1]) {
    screen = html`<${Join} key=${route[1]} code=${route[1]} />`;
  } else if (route[0] === 'setup') {
    screen = html`<${Setup} />`;
  } else if (route[0] === 'reset') {
    screen = html`<${Reset} />`;
  } else if (route[0] === 'signup' && !signedIn) {
    screen = html`<${Signup} />`;
  } else if (route[0] === 'forgot' && !signedIn) {
    screen = html`<${Forgot} />`;
  } else if (!signedIn) {
    screen = html`<${SignIn} notice=${auth.notice} />`;
  } else if (!spec && ['p', 'projects', 'account', 'admin'].includes(route[0])) {
    screen = html`<p class="busy" role="status">${t('loading')}</p>`;
  } else if ((route[0] === 'p' || route[0] === 'projects') && route[1]) {
    // #/projects/<id>: where a launch from the school's LMS lands (POST /auth/ticket redirects there)
    screen = html`<${ProjectScreen} key=${route[1]} projectId=${route[1]} tab=${route[2]} item=${route[3]} rest=${route.slice(4)} />`;
  } else if (route[0] === 'account') {
    screen = html`<${Account} />`;
  } else if (route[0] === 'admin' && user?.is_admin) {
    screen = html`<${Admin} />`;
  } else {
    screen = html`<${Projects} />`;
  }

  return html`<${AppContext.Provider} value=${context}>
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>${t('skip')}</a>
    <header class="top">
      <a class="brand" href=${href()}>studyAI</a>
      ${signedIn && html`<nav class="row account-nav" aria-label=${t('accountMenu')}>
        ${user?.is_admin && html`<a href=${href('admin')} aria-current=${route[0] === 'admin' ? 'page' : undefined}>${t('admin')}</a>`}
        ${user && html`<span class="meta who">${user.display_name || user.email}</span>`}
        <a href=${href('account')} aria-current=${route[0] === 'account' ? 'page' : undefined}>${t('account')}</a>
        <button type="button" class="link" onClick=${signOut}>${t('signOut')}</button>
      </nav>`}
    </header>
    <main id="main" tabindex="-1">${screen}</main>
  <//>`;
}
