// Ask: a chat per thread. The answer streams in as the API writes it (SSE over fetch), citations are
// chips that open the cited passage beside the answer, "not found" and clarifying questions are shown as
// such, and the caller's earlier threads are listed (#/p/<id>/ask/<thread id>).
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { Markdown } from '../markdown.js';
import { Busy, CitationChips, Empty, ErrorNote, PassagePanel, formatDate, useAsync } from '../ui.js';

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
  const [question, setQuestion] = useState('');
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
        if (name === 'queued') update({ queued: data.position });
        else if (name === 'token') {
          if (first) performance.mark('studyai:first-token'); // benchmarks/web_budget.py
          first = false;
          update((m) => ({ content: m.content + data.text, queued: null }));
        } else if (name === 'reset') update({ content: '' }); // withheld after it streamed
        else if (name === 'citations') update({ citations: data });
        else if (name === 'done') {
          update({ streaming: false, outcome: data.outcome, has_answer: data.has_answer, content: data.answer, citations: data.citations });
          if (data.thread_id && data.thread_id !== threadId) onThread(data.thread_id);
        } else if (name === 'error') update({ streaming: false, error: data.detail, retryAfter: data.retry_after });
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

function Message({ message: m, onOpen }) {
  const { t } = useApp();
  if (m.role === 'user') return html`<li class="msg user"><span class="visually-hidden">${t('you')}: </span><p>${m.content}</p></li>`;
  const kind = m.outcome && m.outcome !== 'answered' ? m.outcome : null;
  return html`<li class=${`msg assistant${kind ? ` outcome-${kind}` : ''}`} data-outcome=${m.outcome || ''}>
    ${kind && html`<p class="outcome-label">${t(`outcome.${kind}`)}</p>`}
    ${m.queued && html`<p class="meta" role="status">${t('queued', { n: m.queued })}</p>`}
    ${m.streaming && !m.content && !m.queued && html`<${Busy} label=${t('thinking')} />`}
    ${m.streaming ? html`<p class="answer streaming" data-streaming="true">${m.content}</p>` : m.content && html`<${Markdown} text=${m.content} className="answer markdown" />`}
    ${m.error && html`<p class="error" role="alert">${m.error}${m.retryAfter ? ` ${t('retryAfter', { s: m.retryAfter })}` : ''}</p>`}
    <${CitationChips} citations=${m.citations} onOpen=${onOpen} />
  </li>`;
}
