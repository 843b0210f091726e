// Documents: drag-and-drop upload with live progress by stage, status and reasons, versions, reindex,
// delete, and the chunk viewer (#/p/<id>/documents/<document id>). Folders and course ZIPs go up as one
// batch (course_upload.js).
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { href } from '../router.js';
import {
  Busy, Empty, ErrorNote, JobProgress, formatDate, pagesLabel, sectionLabel, useAction, useAsync, useJob,
} from '../ui.js';
import { ACCEPT, ACCEPT_DOCUMENT, CourseBatchRow, droppedItems, planUploads, readFolder } from './course_upload.js';
import { Welcome } from './welcome.js';

export function Documents({ item }) {
  return item ? html`<${Chunks} documentId=${item} />` : html`<${DocumentList} />`;
}

function DocumentList() {
  const { api, t, projectId, writer } = useApp();
  const docs = useAsync(() => api.all('listDocuments', { project_id: projectId }, { pageSize: 1000 }), [projectId]);
  const [uploads, setUploads] = useState([]);
  const busy = (docs.data || []).some((d) => d.status === 'queued' || d.status === 'processing');
  useEffect(() => {
    if (!busy) return undefined;
    const timer = setTimeout(docs.reload, 1500); // documents still indexing: their status moves on its own
    return () => clearTimeout(timer);
  }, [docs.data]);

  // Loose files one row each; a folder's files and ZIPs together as one batch row.
  const addFiles = (files, folderItems = []) => {
    const { single, course } = planUploads(files, folderItems);
    const id = (name) => `${name}-${performance.now()}-${Math.random()}`;
    const added = single.map((file) => ({ id: id(file.name), file }));
    if (course.length) added.unshift({ id: id('batch'), items: course });
    setUploads((list) => [...added, ...list]);
  };
  const dismiss = (id) => setUploads((list) => list.filter((u) => u.id !== id));

  return html`<${Welcome} /><section aria-labelledby="docs-title">
    <h2 id="docs-title">${t('tab.documents')}</h2>
    ${writer && html`<${DropZone} onFiles=${addFiles} />`}
    ${uploads.length > 0 && html`<ul class="list uploads" aria-label=${t('uploads')}>
      ${uploads.map((u) => (u.items
        ? html`<${CourseBatchRow} key=${u.id} upload=${u} onAccepted=${docs.reload} onDone=${docs.reload} onDismiss=${() => dismiss(u.id)} />`
        : html`<${UploadRow} key=${u.id} upload=${u} onDone=${docs.reload} onDismiss=${() => dismiss(u.id)} />`))}
    </ul>`}
    ${docs.loading && !docs.data && html`<${Busy} />`}
    <${ErrorNote} error=${docs.error} />
    ${docs.data && !docs.data.length && html`<${Empty}>${t('noDocuments')}<//>`}
    ${docs.data?.length > 0 && html`<${DocumentTable} docs=${docs.data} reload=${docs.reload} />`}
  </section>`;
}

function DropZone({ onFiles }) {
  const { t } = useApp();
  const [over, setOver] = useState(false);
  const [error, setError] = useState(null);
  const input = useRef(null);
  const drop = async (e) => {
    e.preventDefault();
    setOver(false);
    setError(null);
    const { folders, files } = droppedItems(e.dataTransfer);
    try {
      const folderItems = (await Promise.all(folders.map((folder) => readFolder(folder)))).flat();
      if (files.length || folderItems.length) onFiles(files, folderItems);
    } catch (err) {
      setError(err); // a folder the browser could not read (moved, no permission): said, not lost silently
    }
  };
  // The folder picker gives each file its path in the folder (webkitRelativePath): the batch keeps it.
  const pickFolder = (e) => {
    onFiles([], [...e.target.files].map((file) => ({ file, path: file.webkitRelativePath || file.name })));
    e.target.value = '';
  };
  return html`<div class=${`dropzone${over ? ' over' : ''}`} data-testid="dropzone"
      onDragOver=${(e) => { e.preventDefault(); setOver(true); }} onDragLeave=${() => setOver(false)} onDrop=${drop}>
    <p>${t('dropHere')}</p>
    <label class="button" for="upload-input">${t('chooseFiles')}</label>
    <input id="upload-input" class="visually-hidden" type="file" multiple accept=${ACCEPT} ref=${input}
      onChange=${(e) => { onFiles([...e.target.files]); e.target.value = ''; }} />
    <label class="button" for="folder-input">${t('chooseFolder')}</label>
    <input id="folder-input" class="visually-hidden" type="file" multiple webkitdirectory
      onChange=${pickFolder} />
    <p class="hint">${t('uploadHint')}</p>
    <${ErrorNote} error=${error} />
  </div>`;
}

// One file on its way: bytes sent, then the indexing job's stage (parsing, chunking, embedding n/N).
function UploadRow({ upload, onDone, onDismiss }) {
  const { api, t, projectId } = useApp();
  const [sent, setSent] = useState(0);
  const [accepted, setAccepted] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const form = new FormData();
    form.append('file', upload.file);
    api.upload('uploadDocument', { project_id: projectId }, form, setSent).then((r) => { setAccepted(r); onDone(); }, setError);
  }, []);
  const { job, error: jobError } = useJob('getJob', accepted && { project_id: projectId, job_id: accepted.job_id }, {
    onEnd: onDone,
  });
  const ended = error || job?.status === 'succeeded' || job?.status === 'failed';
  return html`<li class="upload" data-status=${job?.status || (error ? 'failed' : 'sending')}>
    <div class="row">
      <strong>${upload.file.name}</strong>
      ${job?.status === 'succeeded' && html`<span class="badge ok">${t('status.ready')}</span>`}
      ${ended && html`<button type="button" class="link" onClick=${onDismiss}>${t('dismiss')}</button>`}
    </div>
    ${!accepted && !error && html`<div class="job" role="status"><span>${t('sending')}</span>
      <progress max="1" value=${sent} aria-label=${t('sending')}></progress></div>`}
    <${ErrorNote} error=${error || jobError} />
    ${job && job.status !== 'succeeded' && html`<${JobProgress} job=${job} />`}
  </li>`;
}

function DocumentTable({ docs, reload }) {
  const { api, t, lang, projectId, writer } = useApp();
  const { run: act, error } = useAction(async (work) => {
    await work();
    reload();
  });
  const remove = (d) => confirm(t('confirmDelete', { title: d.title })) && act(() => api.call('deleteDocument', { project_id: projectId, document_id: d.id }));
  const reindex = (d) => act(() => api.call('reindexDocument', { project_id: projectId, document_id: d.id }));
  const newVersion = (d, file) => {
    const form = new FormData();
    form.append('file', file);
    act(() => api.upload('newVersion', { project_id: projectId, document_id: d.id }, form));
  };
  return html`<${ErrorNote} error=${error} />
    <div class="table-wrap"><table class="docs">
      <caption class="visually-hidden">${t('tab.documents')}</caption>
      <thead><tr>
        <th scope="col">${t('document')}</th><th scope="col">${t('status')}</th>
        <th scope="col">${t('version')}</th><th scope="col">${t('chunks')}</th><th scope="col">${t('actions')}</th>
      </tr></thead>
      <tbody>
        ${docs.map((d) => html`<tr key=${d.id} data-document=${d.title}>
          <td>
            <a href=${href('p', projectId, 'documents', d.id)}>${d.title}</a>
            <div class="meta">${d.filename} · ${t(`source.${d.source_type}`, {}, d.source_type)}${d.kind === 'generated' ? ` · ${t('generated')}` : ''} · ${formatDate(d.updated_at, lang)}</div>
            ${d.error && html`<div class="error">${t('reason')}: ${d.error}</div>`}
            ${d.warnings?.map((w) => html`<div class="warning">${w}</div>`)}
          </td>
          <td><span class=${`badge status-${d.status}`}>${t(`status.${d.status}`)}</span></td>
          <td>v${d.version}${d.indexed_version !== d.version ? html` <span class="meta">(${t('indexed')} ${d.indexed_version ? `v${d.indexed_version}` : '—'})</span>` : ''}</td>
          <td>${d.chunk_count}</td>
          <td class="actions">
            <a href=${href('p', projectId, 'documents', d.id)}>${t('viewChunks')}</a>
            ${writer && html`
              <label class="link" for=${`version-${d.id}`}>${t('newVersion')}</label>
              <input id=${`version-${d.id}`} class="visually-hidden" type="file" accept=${ACCEPT_DOCUMENT}
                aria-label=${`${t('newVersion')}: ${d.title}`}
                onChange=${(e) => { if (e.target.files[0]) newVersion(d, e.target.files[0]); e.target.value = ''; }} />
              ${d.status === 'failed' && html`<button type="button" class="link" onClick=${() => reindex(d)}>${t('retry')}</button>`}
              <button type="button" class="link danger" onClick=${() => remove(d)} aria-label=${`${t('delete')}: ${d.title}`}>${t('delete')}</button>`}
          </td>
        </tr>`)}
      </tbody>
    </table></div>`;
}

function Chunks({ documentId }) {
  const { api, t, projectId } = useApp();
  const params = { project_id: projectId, document_id: documentId };
  const doc = useAsync(() => api.call('getDocument', params), [documentId]);
  const [limit, setLimit] = useState(100);
  const chunks = useAsync(() => api.call('listChunks', params, { query: { limit, offset: 0 } }), [documentId, limit]);
  return html`<section aria-labelledby="chunks-title">
    <p><a href=${href('p', projectId, 'documents')}>← ${t('tab.documents')}</a></p>
    <h2 id="chunks-title">${doc.data ? doc.data.title : t('document')}</h2>
    <${ErrorNote} error=${doc.error || chunks.error} />
    ${doc.data && html`<p class="meta">${doc.data.filename} · v${doc.data.version} · ${t(`status.${doc.data.status}`)} · ${doc.data.chunk_count} ${t('chunks')}${doc.data.page_count ? ` · ${doc.data.page_count} ${t(doc.data.source_type === 'pptx' ? 'slidesCount' : 'pagesCount')}` : ''}</p>`}
    ${chunks.loading && !chunks.data && html`<${Busy} />`}
    ${chunks.data && !chunks.data.length && html`<${Empty}>${t('noChunks')}<//>`}
    <ol class="chunks">
      ${(chunks.data || []).map((c) => html`<li key=${c.id} class="chunk">
        <p class="meta"><strong>#${c.ordinal + 1}</strong> · ${sectionLabel(c.section_path) || t('noSection')}${c.page_start ? ` · ${pagesLabel(t, c.page_start, c.page_end, doc.data?.source_type === 'pptx' ? 'slide' : 'page')}` : ''} · ${t('chars')} ${c.char_start}–${c.char_end}</p>
        <pre class="chunk-text">${c.text}</pre>
      </li>`)}
    </ol>
    ${chunks.data?.length === limit && html`<button type="button" onClick=${() => setLimit(limit + 100)}>${t('more')}</button>`}
  </section>`;
}
