// The caller's API keys, for scripts and tools: a new one is shown once (only its hash is stored), and any
// can be revoked (it fails on its next request, everywhere).
import { html, useState } from '../lib.js';
import { useApp } from '../context.js';
import { Busy, Empty, ErrorNote, formatDate, useAction, useAsync } from '../ui.js';

export function ApiKeys() {
  const { api, t, lang } = useApp();
  const keys = useAsync(() => api.call('listKeys'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState(null);
  const create = useAction(async () => {
    setCreated(await api.call('createKey', {}, { json: { name: name.trim() || 'default' } }));
    setName('');
    keys.reload();
  });
  const revoke = useAction(async (key) => {
    await api.call('revokeKey', { key_id: key.id });
    keys.reload();
  });
  const live = (keys.data || []).filter((k) => k.status === 'active');
  return html`<section class="card" aria-labelledby="keys-title">
    <h2 id="keys-title">${t('apiKeys')}</h2>
    <p class="hint">${t('apiKeysHelp')}</p>
    ${keys.loading && !keys.data && html`<${Busy} />`}
    <${ErrorNote} error=${keys.error || revoke.error} />
    ${keys.data && !live.length && html`<${Empty}>${t('noKeys')}<//>`}
    <ul class="list keys">
      ${live.map((k) => html`<li key=${k.id}>
        <span><strong>${k.name}</strong> <code>${k.prefix}…</code></span>
        <span class="meta">${t('created', { date: formatDate(k.created_at, lang) })}${k.last_used_at ? ` · ${t('lastUsed', { date: formatDate(k.last_used_at, lang) })}` : ''}</span>
        <button type="button" class="link danger" onClick=${() => confirm(t('confirmRevokeKey', { name: k.name })) && revoke.run(k)}
          aria-label=${`${t('revoke')}: ${k.name}`}>${t('revoke')}</button>
      </li>`)}
    </ul>
    ${created && html`<div class="new-key" role="status">
      <p><strong>${t('keyShownOnce')}</strong></p>
      <label for="new-key-value">${t('newKeyValue', { name: created.name })}</label>
      <input id="new-key-value" readonly value=${created.key} onFocus=${(e) => e.target.select()} />
    </div>`}
    <form onSubmit=${create.submit}>
      <label for="key-name">${t('keyName')}</label>
      <div class="row nowrap">
        <input id="key-name" maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="default" />
        <button type="submit" disabled=${create.busy}>${t('createKey')}</button>
      </div>
      <${ErrorNote} error=${create.error} />
    </form>
  </section>`;
}
