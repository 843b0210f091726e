// A whole course at once: a folder (chosen, or dropped and read entry by entry) or a course ZIP goes to
// the batch endpoint (POST .../documents/batch), each file named by its path in the folder, and one row
// follows the whole batch (GET .../documents/batches/<id>) until every document is ready or failed.
// Loose files keep their own upload rows (documents.js): one request and one job each.
import { html, useEffect, useState } from '../lib.js';
import { useApp } from '../context.js';
import { ErrorNote, usePoll } from '../ui.js';

// What the server takes as one document (core/text/filetypes.py ACCEPTED_TYPES); uploads take course
// ZIPs too, a new version of a document does not.
export const ACCEPT_DOCUMENT = [
  '.pdf', '.pptx', '.docx', '.xlsx', '.epub', '.html', '.htm', '.md', '.markdown', '.txt',
  '.png', '.jpg', '.jpeg', '.tif', '.tiff', 'application/pdf', 'text/markdown', 'text/plain', 'text/html',
].join(',');
export const ACCEPT = `${ACCEPT_DOCUMENT},.zip,application/zip`;

// One request holds at most this much: the server caps a request (COURSE_UPLOAD_MAX_BYTES, 500 MB by
// default), and smaller requests show progress sooner and lose less when one fails.
const GROUP_FILES = 100;
const GROUP_BYTES = 100 * 1024 * 1024;
const POLL_MS = 1500;

const isZip = (file) => /\.zip$/i.test(file.name) || file.type === 'application/zip';

// Picked or dropped files: a ZIP is a whole course (the batch endpoint unpacks it), the others are
// single documents. `folderItems` ({file, path}) come from a folder and always go to the batch.
export function planUploads(files, folderItems = []) {
  const single = [];
  const course = [...folderItems];
  for (const file of files) {
    if (isZip(file)) course.push({ file, path: file.name });
    else single.push(file);
  }
  return { single, course };
}

// The dropped folders' entries and the loose files, taken while the drop event lasts: the browser
// empties the DataTransfer once the handler returns, so the folders are read afterwards (readFolder).
export function droppedItems(transfer) {
  const folders = [];
  const files = [];
  for (const item of transfer?.items || []) {
    if (item.kind !== 'file') continue;
    const entry = item.webkitGetAsEntry?.();
    if (entry?.isDirectory) folders.push(entry);
    else {
      const file = item.getAsFile();
      if (file) files.push(file);
    }
  }
  if (!transfer?.items?.length && transfer?.files) files.push(...transfer.files);
  return { folders, files };
}

// Every file under a dropped folder entry with its path from that folder ("course/week 1/intro.md").
export async function readFolder(entry, prefix = '') {
  const path = `${prefix}${entry.name}`;
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    return [{ file, path }];
  }
  const reader = entry.createReader();
  const found = [];
  // readEntries answers a folder in pieces (100 entries a call in Chromium): called until it answers none.
  for (;;) {
    const children = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!children.length) break;
    for (const child of children) found.push(...(await readFolder(child, `${path}/`)));
  }
  return found;
}

export function groupItems(items, maxFiles = GROUP_FILES, maxBytes = GROUP_BYTES) {
  const groups = [];
  let group = [];
  let bytes = 0;
  for (const item of items) {
    if (group.length && (group.length >= maxFiles || bytes + item.file.size > maxBytes)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(item);
    bytes += item.file.size;
  }
  if (group.length) groups.push(group);
  return groups;
}

// Sends the groups one after the other into one batch (the first answer's batch_id); a refused request
// (413, 429 with its reason) stops the rest, and what was already accepted goes on indexing.
async function sendCourse(api, projectId, items, { onBatch, onProgress }) {
  const total = items.reduce((sum, item) => sum + item.file.size, 0) || 1;
  let sent = 0;
  let batchId = null;
  for (const group of groupItems(items)) {
    const form = new FormData();
    for (const { file, path } of group) form.append('files', file, path);
    const bytes = group.reduce((sum, item) => sum + item.file.size, 0);
    const query = batchId ? { batch_id: batchId } : {};
    const answer = await api.upload('uploadBatch', { project_id: projectId }, form, (f) => onProgress((sent + f * bytes) / total), query);
    sent += bytes;
    onProgress(sent / total);
    if (!batchId) {
      batchId = answer.batch_id;
      onBatch(batchId);
    }
  }
}

// The folder's name, or the ZIP's: what the person picked.
function courseName(items) {
  const tops = new Set(items.map((item) => item.path.split('/')[0]));
  return tops.size === 1 ? [...tops][0] : null;
}

export function summaryText(t, progress) {
  return [
    t('batchReady', { ready: progress.ready, total: progress.total }),
    progress.failed > 0 && t('batchFailed', { n: progress.failed }),
    progress.refused.length > 0 && t('batchRefused', { n: progress.refused.length }),
  ].filter(Boolean).join(' · ');
}

// One row for the whole batch: bytes sent, then "37 of 120 ready · 2 failed · 3 refused" with a bar, and
// the failed documents and refused files with their reasons.
export function CourseBatchRow({ upload, onAccepted, onDone, onDismiss }) {
  const { api, t, projectId } = useApp();
  const [sent, setSent] = useState(0);
  const [sending, setSending] = useState(true);
  const [batchId, setBatchId] = useState(null);
  const [progress, setProgress] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const onBatch = (id) => {
      setBatchId(id);
      onAccepted();
    };
    sendCourse(api, projectId, upload.items, { onBatch, onProgress: setSent }).catch(setError).finally(() => setSending(false));
  }, []);
  // Polled while files are still being sent too (the first groups index meanwhile); it stops once the
  // last group is in and nothing of the batch is queued or processing.
  const onState = (state) => {
    setProgress(state);
    if (!state.done || sending) return false;
    onDone();
    return true;
  };
  usePoll(Boolean(batchId), () => api.call('getBatch', { project_id: projectId, batch_id: batchId }),
    { onState, onError: setError, interval: POLL_MS }, [batchId, sending]);

  const name = courseName(upload.items);
  const title = name ? t('batchTitle', { name }) : t('batchFiles', { n: upload.items.length });
  const finished = !sending && (progress?.done || !batchId);
  const failedDocs = (progress?.documents || []).filter((d) => d.status === 'failed');
  const refused = progress?.refused || [];
  const summary = progress && summaryText(t, progress);
  return html`<li class="upload batch" data-testid="course-batch"
      data-status=${finished ? 'done' : sending ? 'sending' : 'indexing'}>
    <div class="row">
      <strong>${title}</strong>
      ${finished && progress && html`<span class=${`badge ${progress.failed ? 'status-failed' : 'ok'}`}>${t('batchDone')}</span>`}
      ${finished && html`<button type="button" class="link" onClick=${onDismiss}>${t('dismiss')}</button>`}
    </div>
    ${sending && html`<div class="job" role="status"><span>${t('batchSending', { n: upload.items.length })}</span>
      <progress max="1" value=${sent} aria-label=${t('sending')}></progress></div>`}
    ${progress && html`<div class="job" role="status" aria-live="polite">
      <span class="batch-summary">${summary}</span>
      <progress max=${Math.max(progress.total, 1)} value=${progress.ready + progress.failed} aria-label=${summary}></progress>
    </div>`}
    <${ErrorNote} error=${error} />
    ${(failedDocs.length > 0 || refused.length > 0) && html`<details class="batch-problems">
      <summary>${t('batchProblems', { n: failedDocs.length + refused.length })}</summary>
      ${failedDocs.length > 0 && html`<p class="meta">${t('batchFailedList')}</p>
        <ul class="batch-failed">${failedDocs.map((d) => html`<li key=${d.id}><strong>${d.title}</strong>: ${d.error || t('status.failed')}</li>`)}</ul>`}
      ${refused.length > 0 && html`<p class="meta">${t('batchRefusedList')}</p>
        <ul class="batch-refused">${refused.map((r, i) => html`<li key=${i}><strong>${r.path}</strong>: ${r.reason}</li>`)}</ul>`}
    </details>`}
  </li>`;
}
