// The one API client of the app. Every request goes through ROUTES: each entry names the method and the
// path template exactly as in the API's OpenAPI spec (/openapi.json), and the query parameters it may
// send. tests/backend/test_frontend_api.py checks each entry against the app's spec, so a renamed or
// removed route fails the tests, not the students.
//
// Routes marked `optional` belong to features the server may not have yet (the study loop, issue 12): the
// app reads /openapi.json (public, unauthenticated) and shows those screens only when their routes are
// there (`api.has(name)`).
//
// Two ways in: an API key (developers, scripts: sent as `Authorization: Bearer`), or a browser session
// (an HttpOnly cookie the app never sees; its CSRF token, kept in memory only, goes in X-CSRF-Token on
// every request that is not a GET).

import { readEvents } from './sse.js';

const P = '/projects/{project_id}';

export const ROUTES = {
  // projects and members
  listProjects: ['GET', '/projects', { query: ['limit', 'offset'] }],
  createProject: ['POST', '/projects'],
  getProject: ['GET', `${P}`],
  updateProject: ['PATCH', `${P}`],
  deleteProject: ['DELETE', `${P}`],
  listMembers: ['GET', `${P}/members`, { query: ['limit', 'offset'] }],
  // an owner invites by email (202: a personal invitation the person accepts once signed in with it)
  addMember: ['POST', `${P}/members`],
  memberInvitations: ['GET', `${P}/members/invitations`],
  withdrawMemberInvitation: ['DELETE', `${P}/members/invitations/{invitation_id}`],
  changeRole: ['PATCH', `${P}/members/{user_id}`],
  removeMember: ['DELETE', `${P}/members/{user_id}`],
  listKeys: ['GET', '/me/keys'],
  createKey: ['POST', '/me/keys'],
  revokeKey: ['DELETE', '/me/keys/{key_id}'],
  // sign-in (issues 30, 39): passwords, sessions, sign-up, the first run, reset links (an administrator's,
  // or mailed by "forgot password"), the account and the personal invitations waiting for it
  authConfig: ['GET', '/auth/config'],
  login: ['POST', '/auth/login'],
  session: ['GET', '/auth/session'],
  logout: ['POST', '/auth/logout'],
  signup: ['POST', '/auth/signup'],
  setup: ['POST', '/auth/setup'],
  reset: ['POST', '/auth/reset'],
  checkReset: ['POST', '/auth/reset/check'], // body {token}: never in a URL
  forgot: ['POST', '/auth/forgot'],
  linkSchoolLogin: ['POST', '/auth/oidc/link'],
  me: ['GET', '/me'],
  updateMe: ['PATCH', '/me'],
  changePassword: ['POST', '/me/password'],
  listSessions: ['GET', '/me/sessions'],
  revokeSession: ['DELETE', '/me/sessions/{session_id}'],
  myInvitations: ['GET', '/me/invitations'],
  acceptInvitation: ['POST', '/me/invitations/{invitation_id}/accept'],
  declineInvitation: ['DELETE', '/me/invitations/{invitation_id}'],
  // invitations: a code or a link joins a project
  createInvitation: ['POST', `${P}/invitations`],
  listInvitations: ['GET', `${P}/invitations`],
  revokeInvitation: ['DELETE', `${P}/invitations/{invitation_id}`],
  emailInvitation: ['POST', `${P}/invitations/{invitation_id}/email`],
  joinPreview: ['GET', '/join/{code}'],
  join: ['POST', '/join'],
  joinSignup: ['POST', '/join/signup'],
  // the server's administrators
  adminUsers: ['GET', '/admin/users', { query: ['q', 'limit', 'offset'] }],
  adminCreateUser: ['POST', '/admin/users'],
  adminUpdateUser: ['PATCH', '/admin/users/{user_id}'],
  disableUser: ['POST', '/admin/users/{user_id}/disable'],
  enableUser: ['POST', '/admin/users/{user_id}/enable'],
  userResetLink: ['POST', '/admin/users/{user_id}/reset-link'],
  adminAudit: ['GET', '/admin/audit', { query: ['limit', 'offset'] }],
  adminWorkers: ['GET', '/admin/workers'],
  // documents and jobs
  listDocuments: ['GET', `${P}/documents`, { query: ['limit', 'offset'] }],
  uploadDocument: ['POST', `${P}/documents`],
  // a course's folder or ZIP as one batch, sent in several requests that share the first one's batch_id
  uploadBatch: ['POST', `${P}/documents/batch`, { query: ['batch_id'] }],
  getBatch: ['GET', `${P}/documents/batches/{batch_id}`],
  getDocument: ['GET', `${P}/documents/{document_id}`],
  newVersion: ['PATCH', `${P}/documents/{document_id}`],
  deleteDocument: ['DELETE', `${P}/documents/{document_id}`],
  reindexDocument: ['POST', `${P}/documents/{document_id}/reindex`],
  listChunks: ['GET', `${P}/documents/{document_id}/chunks`, { query: ['limit', 'offset'] }],
  // what a citation opens (issue 42): the version it names, as bytes and as the passage in its parsed text
  versionFile: ['GET', `${P}/documents/{document_id}/versions/{version}/file`],
  versionText: ['GET', `${P}/documents/{document_id}/versions/{version}/text`, { query: ['char_start', 'char_end', 'page'] }],
  // a deck's slide laid out for drawing
  versionSlide: ['GET', `${P}/documents/{document_id}/versions/{version}/slides/{slide}`],
  // the passage's boxes on a scanned page or page image (its words read by OCR on the server)
  pageHighlight: ['GET', `${P}/documents/{document_id}/versions/{version}/pages/{page}/highlight`, { query: ['char_start', 'char_end', 'quote'] }],
  getJob: ['GET', `${P}/jobs/{job_id}`],
  // the material's structure and key concepts, every node naming its chunks
  projectMindMap: ['GET', `${P}/mindmap`],
  documentMindMap: ['GET', `${P}/documents/{document_id}/mindmap`],
  // questions answered from the material
  ask: ['POST', `${P}/qa`],
  listThreads: ['GET', `${P}/qa/threads`, { query: ['limit', 'offset'] }],
  getThread: ['GET', `${P}/qa/threads/{thread_id}`],
  deleteThread: ['DELETE', `${P}/qa/threads/{thread_id}`],
  // plans and notes
  createPlan: ['POST', `${P}/plans`],
  listPlans: ['GET', `${P}/plans`, { query: ['limit', 'offset'] }],
  getPlan: ['GET', `${P}/plans/{plan_id}`],
  writeNote: ['POST', `${P}/notes`],
  getNoteJob: ['GET', `${P}/notes/{job_id}`],
  noteMarkdown: ['GET', `${P}/notes/{job_id}/markdown`, { optional: true }],
  // audio overviews (issue 42): a worker job's spoken script of chosen documents, its recording as OGG or MP3
  audioVoices: ['GET', `${P}/audio/voices`],
  makeAudioOverview: ['POST', `${P}/audio`],
  listAudioOverviews: ['GET', `${P}/audio`, { query: ['limit', 'offset'] }],
  getAudioOverview: ['GET', `${P}/audio/{overview_id}`],
  audioFile: ['GET', `${P}/audio/{overview_id}/file`, { query: ['format', 'download'] }],
  // questions, attempts
  generateQuestions: ['POST', `${P}/questions/generate`],
  listQuestions: ['GET', `${P}/questions`, { query: ['status', 'type', 'limit', 'offset'] }],
  // the same route with the study loop's review filters (`needs`: present only once the server has them)
  reviewQueue: ['GET', `${P}/questions`, { query: ['review_state', 'flagged', 'limit'], needs: 'review_state' }],
  getQuestion: ['GET', `${P}/questions/{question_id}`],
  updateQuestion: ['PATCH', `${P}/questions/{question_id}`],
  reviewQuestion: ['POST', `${P}/questions/{question_id}/review`, { optional: true }],
  attempt: ['POST', `${P}/questions/{question_id}/attempts`],
  listAttempts: ['GET', `${P}/questions/{question_id}/attempts`, { query: ['limit'] }],
  // provisional grades (issue 28): the owners' queue of low-confidence grades, confirmed or corrected
  provisionalAttempts: ['GET', `${P}/attempts/provisional`, { query: ['limit', 'offset'], optional: true }],
  reviewAttempt: ['POST', `${P}/attempts/{attempt_id}/review`, { optional: true }],
  // the study loop (issue 12)
  studyQueue: ['GET', `${P}/study/queue`, { query: ['limit'], optional: true }],
  review: ['POST', `${P}/study/reviews`, { optional: true }],
  studySettings: ['GET', `${P}/study/settings`, { optional: true }],
  putStudySettings: ['PUT', `${P}/study/settings`, { optional: true }],
  mastery: ['GET', `${P}/mastery`, { optional: true }],
  classMastery: ['GET', `${P}/mastery/class`, { optional: true }],
  // the teacher's view of answers
  evaluations: ['GET', `${P}/evaluations`, { query: ['flagged', 'since', 'limit', 'offset'] }],
};

// A refusal: `message` is the server's sentence in the person's language where it has one (the body's
// `message`, with its stable `code` and `params`), else its English `detail`.
export class ApiError extends Error {
  constructor(status, detail, retryAfter, body = null) {
    const said = typeof body?.message === 'string' ? body.message : null;
    super(said || (typeof detail === 'string' ? detail : describe(detail) || `HTTP ${status}`));
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
    this.code = body?.code ?? null;
    this.params = body?.params ?? {};
  }
}

// FastAPI's 422 detail is a list of {loc, msg}: one readable line.
function describe(detail) {
  if (!Array.isArray(detail)) return detail ? JSON.stringify(detail) : '';
  return detail.map((e) => `${(e.loc || []).filter((p) => p !== 'body').join('.')}: ${e.msg}`).join('; ');
}

function fill(template, params) {
  return template.replace(/\{(\w+)\}/g, (_, name) => {
    if (params[name] === undefined || params[name] === null) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(params[name]);
  });
}

export class Api {
  // `key`: an API key; else `csrf`: the browser session's token (the cookie goes by itself); neither: the
  // public routes only (sign-in, a code's preview). `onUnauthorized` runs on any 401.
  constructor(key, { csrf = null, base = '', onUnauthorized = () => {} } = {}) {
    this.key = key;
    this.csrf = csrf;
    this.base = base;
    this.onUnauthorized = onUnauthorized;
    this.spec = null; // the server's OpenAPI document, once loaded: which optional routes it has
    this.language = null; // the language the app shows: the server says its refusals in it (Accept-Language)
  }

  async loadSpec() {
    try {
      const response = await fetch(`${this.base}/openapi.json`);
      this.spec = response.ok ? await response.json() : { paths: {} };
    } catch {
      this.spec = { paths: {} };
    }
    return this;
  }

  // Whether the server documents this route (and, with `field`, its JSON body accepts that field).
  has(name, field) {
    const [method, path, options = {}] = ROUTES[name];
    const operation = this.spec?.paths?.[path]?.[method.toLowerCase()];
    if (!operation) return false;
    if (options.needs && !(operation.parameters || []).some((p) => p.name === options.needs)) return false;
    if (!field) return true;
    const schema = operation.requestBody?.content?.['application/json']?.schema;
    return Boolean(this.resolve(schema)?.properties?.[field]);
  }

  resolve(schema) {
    const ref = schema?.$ref;
    if (!ref) return schema;
    return ref.replace(/^#\//, '').split('/').reduce((node, part) => node?.[part], this.spec);
  }

  url(name, params = {}, query = {}) {
    const [, template, options = {}] = ROUTES[name];
    const allowed = options.query || [];
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (!allowed.includes(key)) throw new Error(`${name} takes no query parameter ${key}`);
      if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
    }
    const qs = search.toString();
    return `${this.base}${fill(template, params)}${qs ? `?${qs}` : ''}`;
  }

  headers(method, extra = {}) {
    const language = this.language ? { 'Accept-Language': this.language } : {};
    if (this.key) return { Authorization: `Bearer ${this.key}`, ...language, ...extra };
    if (this.csrf && method !== 'GET') return { 'X-CSRF-Token': this.csrf, ...language, ...extra };
    return { ...language, ...extra };
  }

  // `own401`: a 401 that is the answer itself (a wrong current password), not a session that ended.
  async fail(response, own401 = false) {
    let detail = response.statusText;
    let body = null;
    try {
      body = await response.json();
      detail = body.detail ?? detail;
    } catch {
      /* not JSON */
    }
    if (response.status === 401 && !own401) this.onUnauthorized();
    return new ApiError(response.status, detail, Number(response.headers.get('Retry-After')) || null, body);
  }

  // One request: `json` or `form` body; answers the parsed JSON (null for 204).
  async call(name, params = {}, { json, form, query, signal, own401 } = {}) {
    const [method] = ROUTES[name];
    const init = { method, headers: this.headers(method), signal, credentials: 'same-origin' };
    if (json !== undefined) {
      init.body = JSON.stringify(json);
      init.headers['Content-Type'] = 'application/json';
    } else if (form !== undefined) {
      init.body = form;
    }
    const response = await fetch(this.url(name, params, query), init);
    if (!response.ok) throw await this.fail(response, own401);
    if (response.status === 204) return null;
    const type = response.headers.get('Content-Type') || '';
    return type.includes('json') ? response.json() : response.text();
  }

  // A file's bytes (a document version for pdf.js or an image): an ArrayBuffer, sent with this client's
  // credentials, which an <img> or pdf.js fetching by itself would not carry (an API key).
  async bytes(name, params = {}, { signal } = {}) {
    const [method] = ROUTES[name];
    const response = await fetch(this.url(name, params), { method, headers: this.headers(method), signal, credentials: 'same-origin' });
    if (!response.ok) throw await this.fail(response);
    return response.arrayBuffer();
  }

  // A file as a Blob (an audio overview's recording), with this client's credentials, which an <audio>
  // fetching by itself would not carry (an API key); `query` as call's.
  async blob(name, params = {}, { query, signal } = {}) {
    const [method] = ROUTES[name];
    const response = await fetch(this.url(name, params, query), { method, headers: this.headers(method), signal, credentials: 'same-origin' });
    if (!response.ok) throw await this.fail(response);
    return response.blob();
  }

  // Multipart upload with byte progress (fetch has none for request bodies): XMLHttpRequest.
  upload(name, params, form, onProgress, query = {}) {
    const [method] = ROUTES[name];
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, this.url(name, params, query));
      for (const [name, value] of Object.entries(this.headers(method))) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress?.(e.loaded / e.total);
      xhr.onerror = () => reject(new ApiError(0, 'network error'));
      xhr.onload = () => {
        let body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          /* empty */
        }
        if (xhr.status >= 200 && xhr.status < 300) resolve(body);
        else {
          if (xhr.status === 401) this.onUnauthorized();
          const retry = Number(xhr.getResponseHeader('Retry-After')) || null;
          reject(new ApiError(xhr.status, body?.detail ?? xhr.statusText, retry, body));
        }
      };
      xhr.send(form);
    });
  }

  // POST /qa with stream: calls onEvent(name, data) for queued, token, reset, citations, done, error.
  async askStream(params, body, onEvent, signal) {
    const response = await fetch(this.url('ask', params), {
      method: 'POST',
      headers: this.headers('POST', { 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
      credentials: 'same-origin',
      body: JSON.stringify({ ...body, stream: true }),
      signal,
    });
    if (!response.ok) throw await this.fail(response);
    await readEvents(response.body, onEvent);
  }

  // Every page of a paged collection (limit/offset), up to `max` rows.
  async all(name, params, { pageSize = 200, max = 2000, query = {} } = {}) {
    const rows = [];
    for (let offset = 0; offset < max; offset += pageSize) {
      const page = await this.call(name, params, { query: { ...query, limit: pageSize, offset } });
      rows.push(...page);
      if (page.length < pageSize) break;
    }
    return rows;
  }
}
