// Markdown from the API (answers, notes, chunk text) is parsed by marked and the HTML it makes is cleaned
// by DOMPurify before it reaches the page: a document or a model reply can carry raw HTML, and marked
// passes it through by design. Nothing else from the API is ever rendered as HTML: every other text goes
// into the page as text (htm/Preact create text nodes).

import { html } from './lib.js';
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';

const marked = new Marked({ gfm: true, breaks: false, async: false });

const PURIFY = {
  USE_PROFILE: { html: true }, // no SVG or MathML
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'iframe'],
  FORBID_ATTR: ['style', 'class', 'id'],
};

// Links open in a new tab without access to this one; only http(s) and mailto survive.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') || '';
    if (!/^(https?:|mailto:)/i.test(href)) node.removeAttribute('href');
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function toSafeHtml(text) {
  return DOMPurify.sanitize(marked.parse(String(text ?? '')), PURIFY);
}

export function Markdown({ text, className = 'markdown' }) {
  return html`<div class=${className} dangerouslySetInnerHTML=${{ __html: toSafeHtml(text) }}></div>`;
}
