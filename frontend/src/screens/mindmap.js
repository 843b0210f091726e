// The mind map of the project's material or of one document (#/p/<id>/map, #/p/<id>/map/<document id>):
// documents, their headings and the key concepts, as the server builds them from what it stores (GET
// .../mindmap; every node names its chunks). A node opens its passages beside the map, and from there a
// question about it on the Ask screen. The same nodes are a nested list too (for screen readers, and
// anyone who prefers one), and the map downloads as SVG or PNG.
import { html, useEffect, useMemo, useRef, useState } from '../lib.js';
import { useApp } from '../context.js';
import { go, href } from '../router.js';
import { Busy, Empty, ErrorNote, Passages, documentChunks, pagesLabel, sectionLabel, useAsync } from '../ui.js';
import { MapCanvas, layout, loadLayout, pngBlob, saveFile, svgText } from './mindmap_view.js';

const LOCATION = { pdf: 'page', image: 'page', pptx: 'slide' };
const SHOWN_PASSAGES = 3;

// Open at first: the root, the concepts' group, and a small project's documents.
function initiallyOpen(nodes) {
  const root = nodes[0];
  const open = new Set(root ? [root.id] : []);
  const branches = nodes.filter((n) => n.parent === root?.id && n.kind !== 'concepts');
  for (const n of nodes) {
    if (n.kind === 'concepts' || (branches.length <= 3 && n.parent === root?.id)) open.add(n.id);
  }
  return open;
}

const nodeName = (t, node) => (node.kind === 'concepts' ? t('map.concepts') : node.label);

export function MindMap({ item }) {
  const { api, t, projectId, project } = useApp();
  const documentId = item || null;
  const map = useAsync(
    () => (documentId
      ? api.call('documentMindMap', { project_id: projectId, document_id: documentId })
      : api.call('projectMindMap', { project_id: projectId })),
    [projectId, documentId],
  );
  const documents = useAsync(() => api.all('listDocuments', { project_id: projectId }, { pageSize: 1000 }), [projectId]);
  const [d3, setD3] = useState(null);
  const [loadError, setLoadError] = useState(null);
  useEffect(() => {
    loadLayout().then(setD3, setLoadError);
  }, []);
  const [opened, setOpened] = useState({ map: null, ids: null }); // the reader's own, for this map
  const [selected, setSelected] = useState(null);
  const [asList, setAsList] = useState(false);
  const [exportError, setExportError] = useState(null);
  const svgRef = useRef(null);
  useEffect(() => setSelected(null), [map.data]);

  const nodes = map.data?.nodes || [];
  const byId = useMemo(() => new Map(nodes.map((n) => [n.id, n])), [map.data]);
  const initial = useMemo(() => initiallyOpen(nodes), [map.data]);
  const open = opened.map === map.data && opened.ids ? opened.ids : initial;
  const laid = useMemo(() => (d3 && nodes.length ? layout(d3, map.data, open, t('map.concepts')) : null), [d3, map.data, open]);
  const setOpen = (change) => setOpened({ map: map.data, ids: change(new Set(open)) });
  const toggle = (id) => setOpen((ids) => (ids.delete(id) ? ids : ids.add(id)));
  // Selecting a node (from the list, or a concept's link) opens the branches down to it.
  const select = (id) => {
    setSelected(id);
    setOpen((ids) => {
      for (let at = byId.get(byId.get(id)?.parent); at; at = byId.get(at.parent)) ids.add(at.id);
      return ids;
    });
  };

  const documentList = documents.data || [];
  const name = documentId ? documentList.find((d) => d.id === documentId)?.title || '' : project.name;
  const file = (ext) => `${t('map.file')}-${(name || 'map').replace(/[^\p{L}\p{N}]+/gu, '-').slice(0, 60)}.${ext}`;
  const save = async (kind) => {
    setExportError(null);
    try {
      const text = svgText(svgRef.current, laid);
      saveFile(kind === 'svg' ? new Blob([text], { type: 'image/svg+xml' }) : await pngBlob(text, laid), file(kind));
    } catch (error) {
      setExportError(error);
    }
  };
  const chosen = selected && byId.get(selected);

  return html`<div class=${`with-side${chosen ? ' open' : ''}`}>
    <section aria-labelledby="map-title">
      <h2 id="map-title">${t('tab.map')}</h2>
      <div class="row mm-bar">
        <label for="map-of">${t('map.of')}</label>
        <select id="map-of" value=${documentId || ''} onChange=${(e) => (e.target.value ? go('p', projectId, 'map', e.target.value) : go('p', projectId, 'map'))}>
          <option value="">${t('wholeProject')}</option>
          ${documentList.filter((d) => d.indexed_version || d.status === 'ready').map((d) => html`<option key=${d.id} value=${d.id}>${d.title}</option>`)}
        </select>
        <div class="segmented" role="group" aria-label=${t('map.view')}>
          <button type="button" aria-pressed=${asList ? 'false' : 'true'} onClick=${() => setAsList(false)}>${t('map.asMap')}</button>
          <button type="button" aria-pressed=${asList ? 'true' : 'false'} onClick=${() => setAsList(true)}>${t('map.asList')}</button>
        </div>
        ${!asList && laid && html`<button type="button" onClick=${() => save('svg')}>${t('map.saveSvg')}</button>
          <button type="button" onClick=${() => save('png')}>${t('map.savePng')}</button>`}
      </div>
      ${map.loading && !map.data && html`<${Busy} />`}
      <${ErrorNote} error=${map.error || loadError || exportError} />
      ${map.data && html`<p class="meta">${t('map.summary', { n: nodes.length })}
        ${` · ${t(`map.from.${map.data.concepts_from}`)}`}${map.data.folded ? ` · ${t('map.folded', { depth: map.data.depth })}` : ''}${map.data.truncated ? ` · ${t('map.truncated', { n: map.data.node_cap })}` : ''}</p>`}
      ${map.data && !nodes.length && html`<${Empty}>${t('map.empty')}<//>`}
      ${nodes.length > 0 && (asList
        ? html`<${MapList} nodes=${nodes} links=${map.data.links} byId=${byId} selected=${selected} onSelect=${select} />`
        : html`<${MapCanvas} key=${documentId || 'project'} laid=${laid} selected=${selected} onSelect=${setSelected} onToggle=${toggle}
            svgRef=${svgRef} t=${t} label=${t('map.label', { name })} />`)}
    </section>
    ${chosen && html`<${NodePanel} key=${chosen.id} node=${chosen} map=${map.data} byId=${byId} documents=${documentList}
      onSelect=${select} onClose=${() => setSelected(null)} />`}
  </div>`;
}

function MapList({ nodes, links, byId, selected, onSelect }) {
  const { t } = useApp();
  const kids = new Map();
  for (const n of nodes) kids.set(n.parent, [...(kids.get(n.parent) || []), n]);
  const item = (n) => {
    const linked = links.filter((l) => l.source === n.id).map((l) => byId.get(l.target)?.label).filter(Boolean);
    return html`<li key=${n.id}>
      <button type="button" class="link" aria-pressed=${selected === n.id ? 'true' : 'false'} onClick=${() => onSelect(n.id)}>${nodeName(t, n)}</button>
      <span class="meta"> ${t('map.passageCount', { n: n.chunk_count })}${linked.length ? ` · ${t('map.linked')}: ${linked.join('; ')}` : ''}</span>
      ${kids.has(n.id) && html`<ul>${kids.get(n.id).map(item)}</ul>`}
    </li>`;
  };
  return html`<ul class="mm-list">${(kids.get(null) || []).map(item)}</ul>`;
}

function NodePanel({ node, map, byId, documents, onSelect, onClose }) {
  const { api, t, projectId } = useApp();
  const heading = useRef(null);
  const [passages, setPassages] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    heading.current?.focus();
    const documentOf = new Map(documents.map((d) => [d.id, d]));
    Promise.all(node.passages.slice(0, SHOWN_PASSAGES).map(async (p) => {
      const chunk = (await documentChunks(api, projectId, p.document_id)).find((c) => c.id === p.chunk_id);
      const doc = documentOf.get(p.document_id);
      return chunk && { ...chunk, chunk_id: chunk.id, document_title: doc?.title || '', location: LOCATION[doc?.source_type] };
    })).then((rows) => setPassages(rows.filter(Boolean)), setError);
  }, [node.id]);
  const name = nodeName(t, node);
  const question = t('map.askAbout', { label: name });
  const linked = map.links.filter((l) => l.source === node.id).map((l) => byId.get(l.target)).filter(Boolean);
  return html`<aside class="passage mm-panel" aria-labelledby="node-title" onKeyDown=${(e) => e.key === 'Escape' && onClose()}>
    <div class="passage-head">
      <h2 id="node-title" tabindex="-1" ref=${heading}>${name}</h2>
      <button type="button" class="icon" onClick=${onClose} aria-label=${t('close')}>×</button>
    </div>
    <p class="meta">${t(`map.kind.${node.kind}`)}${node.section_path.length ? ` · ${sectionLabel(node.section_path)}` : ''}${node.page_start ? ` · ${pagesLabel(t, node.page_start, node.page_end, node.location)}` : ''}${` · ${t('map.passageCount', { n: node.chunk_count })}`}</p>
    <p class="row">
      <a class="button primary" href=${`${href('p', projectId, 'ask')}?q=${encodeURIComponent(question)}`}>${t('map.ask')}</a>
      ${node.kind === 'document' && !map.document_id && html`<a class="button" href=${href('p', projectId, 'map', node.document_id)}>${t('map.documentMap')}</a>`}
    </p>
    ${linked.length > 0 && html`<h3>${t('map.linked')}</h3>
      <ul class="list">${linked.map((n) => html`<li key=${n.id}><button type="button" class="link" onClick=${() => onSelect(n.id)}>${n.label}</button></li>`)}</ul>`}
    <h3>${t('map.passages')}</h3>
    <${ErrorNote} error=${error} />
    ${passages ? html`<${Passages} passages=${passages} />` : html`<${Busy} />`}
  </aside>`;
}
