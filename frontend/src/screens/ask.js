// Ask: a chat per thread. The passages retrieval found come first ("From your material", their key
// sentences highlighted) while the model writes or waits; the answer streams in as a draft until its
// confidence is known (SSE over fetch), then is shown by its label: high, the answer; medium, the answer
// with its deciding passage to check; low (outcome "unsure"), no answer but the passages that bear on
// the question. Citations are chips that open the cited passage beside the answer, "not found" and
// clarifying questions are shown as such, and the caller's earlier threads are listed
// (#/p/<id>/ask/<thread id>).
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, hashQuery, href } from '../router.js';
import { Markdown } from '../markdown.js';
import { CitationChips, ConfidenceBadge, Empty, ErrorNote, PassagePanel, Passages, formatDate, useAsync } from '../ui.js';

export function Ask({ item }) {
  const { api, t, lang, projectId } = useApp();
  const threads = useAsync(() => api.call('listThreads', { project_id: projectId }, { query: { limit: 50 } }), [projectId]);
  const [threadId, setThreadId] = useState(item || null);
  const [messages, setMessages] = useState([]);
  const [loadError, setLoadError] = useState(null);
  const [passage, setPassage] = useState(null);

  useEffect(() => {
    if ((item || null) === threadId && (messages.length || !item)) return; // our own new thread
    setThreadId(item || null);
    setMessages([]);
    setPassage(null);
    if (!item) return;
    api.call('getThread', { project_id: projectId, thread_id: item }).then((thread) => setMessages(thread.messages), setLoadError);
  }, [item]);

  const onThread = (id) => {
    setThreadId(id);
    threads.reload();
    go('p', projectId, 'ask', id);
  };
  const remove = async (id) => {
    if (!confirm(t('confirmDeleteThread'))) return;
    try {
      await api.call('deleteThread', { project_id: projectId, thread_id: id });
      threads.reload();
      if (id === threadId) go('p', projectId, 'ask');
    } catch (e) {
      setLoadError(e);
    }
  };

  return html`<div class=${`ask${passage ? ' with-passage' : ''}`}>
    <nav class="threads" aria-labelledby="threads-title">
      <h2 id="threads-title">${t('threads')}</h2>
      <a class="button" href=${href('p', projectId, 'ask')}>${t('newChat')}</a>
      <${ErrorNote} error=${threads.error} />
      <ul class="list">
        ${(threads.data || []).map((th) => html`<li key=${th.id} class=${th.id === threadId ? 'current' : ''}>
          <a href=${href('p', projectId, 'ask', th.id)} aria-current=${th.id === threadId ? 'page' : undefined}>${th.title}</a>
          <span class="meta">${formatDate(th.updated_at, lang)}</span>
          <button type="button" class="link danger" onClick=${() => remove(th.id)} aria-label=${`${t('delete')}: ${th.title}`}>×</button>
        </li>`)}
      </ul>
      ${threads.data && !threads.data.length && html`<${Empty}>${t('noThreads')}<//>`}
    </nav>
    <section class="chat" aria-labelledby="chat-title">
      <h2 id="chat-title" class="visually-hidden">${t('tab.ask')}</h2>
      <${ErrorNote} error=${loadError} />
      <${Conversation} messages=${messages} setMessages=${setMessages} threadId=${threadId} onThread=${onThread} onOpen=${setPassage} />
    </section>
    ${passage && html`<${PassagePanel} citation=${passage} onClose=${() => setPassage(null)} />`}
  </div>`;
}

function Conversation({ messages, setMessages, threadId, onThread, onOpen }) {
  const { api, t, projectId } = useApp();
  // #/p/<id>/ask?q=…: a question another screen prepared (the mind map's "Ask about this"), for the reader to send
  const [question, setQuestion] = useState(() => hashQuery().get('q') || '');
  const [busy, setBusy] = useState(false);
  const end = useRef(null);
  useEffect(() => end.current?.scrollIntoView?.({ block: 'nearest' }), [messages.length]);

  const update = (patch) =>
    setMessages((list) => {
      const last = list[list.length - 1];
      return [...list.slice(0, -1), { ...last, ...(typeof patch === 'function' ? patch(last) : patch) }];
    });

  const send = async (e) => {
    e.preventDefault();
    const text = question.trim();
    if (!text || busy) return;
    setQuestion('');
    setBusy(true);
    setMessages((list) => [...list, { role: 'user', content: text }, { role: 'assistant', content: '', streaming: true }]);
    let first = true;
    try {
      await api.askStream({ project_id: projectId }, { question: text, thread_id: threadId || undefined }, (name, data) => {
        if (name === 'evidence') {
          performance.mark('studyai:evidence');
          update({ evidence: data });
        } else if (name === 'queued') update({ queued: data.position });
        else if (name === 'token') {
          if (first) performance.mark('studyai:first-token'); // benchmarks/web_budget.py
          first = false;
          update((m) => ({ content: m.content + data.text, queued: null }));
        } else if (name === 'reset') update({ content: '' }); // withheld after it streamed
        else if (name === 'citations') update({ citations: data });
        else if (name === 'done') {
          update({
            streaming: false,
            outcome: data.outcome,
            has_answer: data.has_answer,
            content: data.answer,
            citations: data.citations,
            confidence: data.confidence,
            passages: data.passages,
            options_stated: data.options_stated,
          });
          if (data.thread_id && data.thread_id !== threadId) onThread(data.thread_id);
        } else if (name === 'error') update({ streaming: false, error: data.message || data.detail, retryAfter: data.retry_after });
      });
      update((m) => (m.streaming ? { streaming: false } : {}));
    } catch (err) {
      update({ streaming: false, error: err.message, retryAfter: err.retryAfter });
    } finally {
      setBusy(false);
    }
  };

  return html`<div class="conversation">
    <ol class="messages" aria-live="polite" aria-relevant="additions text" aria-label=${t('conversation')}>
      ${!messages.length && html`<li class="empty">${t('askHelp')}</li>`}
      ${messages.map((m, i) => html`<${Message} key=${i} message=${m} onOpen=${onOpen} />`)}
    </ol>
    <div ref=${end}></div>
    <form class="ask-form" onSubmit=${send}>
      <label for="question" class="visually-hidden">${t('yourQuestion')}</label>
      <textarea id="question" rows="2" maxlength="2000" required value=${question} placeholder=${t('yourQuestion')}
        onInput=${(e) => setQuestion(e.target.value)}
        onKeyDown=${(e) => { if (e.key === 'Enter' && !e.shiftKey) send(e); }}></textarea>
      <button type="submit" class="primary" disabled=${busy}>${busy ? t('answering') : t('ask')}</button>
    </form>
  </div>`;
}

// One reply. Its `guess` (an unsure reply's unclaimed answer) is never shown.
function Message({ message: m, onOpen }) {
  const { t } = useApp();
  if (m.role === 'user') return html`<li class="msg user"><span class="visually-hidden">${t('you')}: </span><p>${m.content}</p></li>`;
  const kind = m.outcome && m.outcome !== 'answered' ? m.outcome : null;
  const label = m.streaming ? null : m.confidence?.label;
  const passages = m.passages?.length ? m.passages : null;
  return html`<li class=${`msg assistant${kind ? ` outcome-${kind}` : ''}`} data-outcome=${m.outcome || ''} data-confidence=${label || ''}>
    ${(kind || label) && html`<p class="outcome-label">${kind && t(`outcome.${kind}`)}${kind && label && ' '}<${ConfidenceBadge} confidence=${m.streaming ? null : m.confidence} /></p>`}
    ${m.streaming && html`<${Passages} passages=${m.evidence} title=${t('fromMaterial')} onOpen=${onOpen} />`}
    ${m.streaming && html`<${Waiting} message=${m} />`}
    ${m.streaming && m.content && html`<p class="meta draft-label">${t('draftChecking')}</p>`}
    ${m.streaming ? html`<p class="answer streaming draft" data-streaming="true">${m.content}</p>` : m.content && html`<${Markdown} text=${m.content} className="answer markdown" />`}
    ${label === 'medium' && passages && html`<p class="check-note">${t('checkPassage')}</p>`}
    ${m.options_stated?.length > 0 && html`<ul class="options-stated">
      ${m.options_stated.map((o) => html`<li key=${o.letter}>${t('optionStated', { letter: o.letter })} <q>${o.sentence}</q></li>`)}
    </ul>`}
    ${!m.streaming && passages && html`<${Passages} passages=${passages} title=${label === 'medium' ? t('decidingPassage') : t('fromMaterial')} onOpen=${onOpen} />`}
    ${m.error && html`<p class="error" role="alert">${m.error}${m.retryAfter ? ` ${t('retryAfter', { s: m.retryAfter })}` : ''}</p>`}
    <${CitationChips} citations=${m.citations} onOpen=${onOpen} />
    ${!m.streaming && !passages && m.evidence?.length > 0 && html`<details class="evidence-more">
      <summary>${t('fromMaterial')}</summary>
      <${Passages} passages=${m.evidence} onOpen=${onOpen} />
    </details>`}
  </li>`;
}

// What a reply is waiting for, said as it changes: the search of the material, then (its passages on
// screen) the model, with the place in its queue when the server sends one, then the answer being written.
function Waiting({ message: m }) {
  const { t } = useApp();
  const found = m.evidence?.length > 0;
  const [state, label] = m.content
    ? ['writing', t('waitWriting')]
    : m.queued
      ? ['queued', found ? t('waitQueued', { n: m.queued }) : t('queued', { n: m.queued })]
      : m.evidence
        ? ['model', found ? t('waitModel') : t('waitModelOnly')]
        : ['searching', t('waitSearching')];
  return html`<p class="busy wait" role="status" data-wait=${state}><span class="spinner" aria-hidden="true"></span>${label}</p>`;
}
