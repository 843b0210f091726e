// Audio overviews: choose a study guide or documents and one or two voices, follow the worker job
// (script, checking line i/n, rendering line i/n, encoding), then play it with its script as a transcript:
// each line opens the passage it rests on, the line being heard is marked, and the recording downloads as
// OGG or MP3.
// #/p/<id>/audio and #/p/<id>/audio/<overview id>.
import { html, useEffect, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { Busy, Empty, ErrorNote, JobProgress, PassagePanel, formatDate, useAction, useAsync, useJob } from '../ui.js';

export function AudioOverviews({ item }) {
  const [passage, setPassage] = useState(null);
  return html`<div class=${`with-side${passage ? ' open' : ''}`}>
    <div>${item ? html`<${OverviewView} overviewId=${item} onOpen=${setPassage} />` : html`<${AudioIndex} />`}</div>
    ${passage && html`<${PassagePanel} citation=${passage} onClose=${() => setPassage(null)} />`}
  </div>`;
}

function AudioIndex() {
  const { api, t, lang, projectId } = useApp();
  const overviews = useAsync(() => api.call('listAudioOverviews', { project_id: projectId }, { query: { limit: 50 } }), [projectId]);
  return html`<section aria-labelledby="audio-title">
    <h2 id="audio-title">${t('tab.audio')}</h2>
    <div class="grid two">
      <${NewOverview} />
      <div>
        <h3>${t('audio.yours')}</h3>
        ${overviews.loading && !overviews.data && html`<${Busy} />`}
        <${ErrorNote} error=${overviews.error} />
        ${overviews.data && !overviews.data.length && html`<${Empty}>${t('audio.none')}<//>`}
        <ul class="list">
          ${(overviews.data || []).map((o) => html`<li key=${o.id}>
            <a href=${href('p', projectId, 'audio', o.id)}>${o.title || t('audio.untitled')}</a>
            <span class="meta">${t(`audio.status.${o.status}`, {}, o.status)}${o.duration_ms ? ` · ${clock(o.duration_ms)}` : ''} · ${formatDate(o.created_at, lang)}</span>
          </li>`)}
        </ul>
      </div>
    </div>
  </section>`;
}

// The project's language decides the voice (`auto`: the chosen documents'); a language without an
// installed voice is said up front where it is known, else by the server's refusal.
function NewOverview() {
  const { api, t, projectId, project } = useApp();
  const voices = useAsync(() => api.call('audioVoices', { project_id: projectId }), [projectId]);
  const documents = useAsync(
    async () => (await api.all('listDocuments', { project_id: projectId }, { pageSize: 1000 })).filter((d) => d.status === 'ready'),
    [projectId],
  );
  const [chosen, setChosen] = useState([]);
  const [count, setCount] = useState(1);
  const language = project?.language;
  const missing = (voices.data?.voices || []).find((v) => v.language === language && !v.available);
  const toggle = (id) => setChosen((ids) => (ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id]));
  const { submit, busy, error } = useAction(async () => {
    const made = await api.call('makeAudioOverview', { project_id: projectId }, { json: { document_ids: chosen, voices: count } });
    go('p', projectId, 'audio', made.id);
  }, { keepBusy: true });
  const guides = (documents.data || []).filter((d) => d.kind === 'generated');
  const uploaded = (documents.data || []).filter((d) => d.kind !== 'generated');
  const option = (d) => html`<label key=${d.id} class="check"><input type="checkbox" name="audio-doc" value=${d.id}
    checked=${chosen.includes(d.id)} onChange=${() => toggle(d.id)} /> ${d.title}</label>`;
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-audio">
    <h3 id="new-audio">${t('audio.new')}</h3>
    <p class="meta">${t('audio.explain')}</p>
    ${missing && html`<p class="error" role="alert" data-no-voice=${missing.language}>${t('audio.noVoice', { language: t(`audio.language.${missing.language}`, {}, missing.language) })}</p>`}
    ${documents.loading && !documents.data && html`<${Busy} />`}
    <${ErrorNote} error=${documents.error || voices.error} />
    ${documents.data && !documents.data.length && html`<${Empty}>${t('audio.noDocuments')}<//>`}
    ${guides.length > 0 && html`<fieldset><legend>${t('audio.guides')}</legend>${guides.map(option)}</fieldset>`}
    ${uploaded.length > 0 && html`<fieldset><legend>${t('audio.documents')}</legend>${uploaded.map(option)}</fieldset>`}
    <fieldset><legend>${t('audio.voices')}</legend>
      <label class="check"><input type="radio" name="audio-voices" value="1" checked=${count === 1} onChange=${() => setCount(1)} /> ${t('audio.oneVoice')}</label>
      <label class="check"><input type="radio" name="audio-voices" value="2" checked=${count === 2} onChange=${() => setCount(2)} /> ${t('audio.twoVoices')}</label>
    </fieldset>
    <${ErrorNote} error=${error} />
    ${busy
      ? html`<${Busy} label=${t('audio.starting')} />`
      : html`<button type="submit" class="primary" disabled=${!chosen.length || Boolean(missing)}>${t('audio.make')}</button>`}
  </form>`;
}

function clock(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// The recording's bytes with the app's credentials (an API key cannot ride on <audio>'s own request),
// played from memory.
function recording(api, projectId, overviewId, format) {
  return api.blob('audioFile', { project_id: projectId, overview_id: overviewId }, { query: { format } });
}

function OverviewView({ overviewId, onOpen }) {
  const { t, projectId } = useApp();
  const [done, setDone] = useState(null);
  const { job, error } = useJob('getAudioOverview', { project_id: projectId, overview_id: overviewId }, { interval: 1000, onEnd: setDone });
  const shown = done || job;
  return html`<section aria-labelledby="overview-title">
    <p><a href=${href('p', projectId, 'audio')}>← ${t('tab.audio')}</a></p>
    <h2 id="overview-title">${shown?.title || t('audio.overview')}</h2>
    <${ErrorNote} error=${error} />
    ${!shown && html`<${Busy} />`}
    ${shown && shown.status !== 'succeeded' && html`<${JobProgress} job=${shown} />`}
    ${shown?.status === 'succeeded' && html`<${Player} overview=${shown} onOpen=${onOpen} />`}
  </section>`;
}

function Player({ overview, onOpen }) {
  const { api, t, projectId } = useApp();
  const player = useRef(null);
  const [source, setSource] = useState(null);
  const [failed, setFailed] = useState(null);
  const [at, setAt] = useState(0);
  useEffect(() => {
    let url = null;
    recording(api, projectId, overview.id, 'ogg')
      .then((blob) => setSource((url = URL.createObjectURL(blob))))
      .catch(setFailed);
    return () => url && URL.revokeObjectURL(url);
  }, [overview.id]);
  const lines = overview.lines || [];
  const current = lines.findIndex((l) => at >= l.start_ms && at < l.end_ms);
  const seek = (line) => {
    if (!player.current) return;
    player.current.currentTime = line.start_ms / 1000;
    player.current.play().catch(() => {});
  };
  const { run: save, error: saveError } = useAction(async (format) => {
    const url = URL.createObjectURL(await recording(api, projectId, overview.id, format));
    const link = document.createElement('a');
    link.href = url;
    link.download = `${(overview.title || 'audio-overview').replace(/[^\p{L}\p{N}]+/gu, '-')}.${format}`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  return html`<div class="audio-overview">
    <p class="meta">${clock(overview.duration_ms || 0)} · ${t('audio.lines', { n: lines.length })} · ${overview.voice}</p>
    <${ErrorNote} error=${failed || saveError} />
    ${source
      ? html`<audio ref=${player} controls preload="auto" src=${source} aria-label=${t('audio.player')}
          onTimeUpdate=${(e) => setAt(e.target.currentTime * 1000)} onSeeked=${(e) => setAt(e.target.currentTime * 1000)}></audio>`
      : !failed && html`<${Busy} />`}
    <p class="row">
      <button type="button" onClick=${() => save('ogg')}>${t('audio.download', { format: 'OGG' })}</button>
      <button type="button" onClick=${() => save('mp3')}>${t('audio.download', { format: 'MP3' })}</button>
    </p>
    <h3>${t('audio.transcript')}</h3>
    <ol class="transcript">
      ${lines.map((line, i) => html`<li key=${i} class=${`speaker-${line.speaker}${i === current ? ' current' : ''}`} aria-current=${i === current ? 'true' : undefined} data-line=${i}>
        <button type="button" class="link time" onClick=${() => seek(line)} aria-label=${t('audio.playFrom', { time: clock(line.start_ms) })}>${clock(line.start_ms)}</button>
        ${overview.voices === 2 && html`<span class="speaker">${t('audio.host', { n: line.speaker + 1 })}</span>`}
        <button type="button" class="link line-text" onClick=${() => line.citations[0] && onOpen(line.citations[0])}
          title=${t('audio.openPassage')}>${line.text}</button>
      </li>`)}
    </ol>
  </div>`;
}
