// Markdown from the API (answers, notes, chunk text) is parsed by marked and the HTML it makes is cleaned
// by DOMPurify before it reaches the page: a document or a model reply can carry raw HTML, and marked
// passes it through by design. Nothing else from the API is ever rendered as HTML: every other text goes
// into the page as text (htm/Preact create text nodes).

import { html } from './lib.js';
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';

const marked = new Marked({ gfm: true, breaks: false, async: false });

// Footnotes (`text[^1]` and `[^1]: source`; the note writer cites this way), which marked leaves as text:
// a reference becomes a superscript number carrying the note's text as its title, and the definitions one
// numbered list where the first of them stood (a note's "References" section). No ids or in-page links:
// the app's routes live in the URL's hash. Numbers follow the order of first reference.
const FOOTNOTE_DEF = /^\[\^([^\]\s]{1,100})\]:[ \t]*([^\n]*(?:\n(?: {2,}|\t)[^\n]*)*)(?:\n+|$)/;
const FOOTNOTE_REF = /^\[\^([^\]\s]{1,100})\](?!:)/;

marked.use({
  extensions: [
    {
      name: 'footnoteDef',
      level: 'block',
      start: (src) => src.match(/^\[\^[^\]\s]{1,100}\]:/m)?.index,
      tokenizer(src) {
        const match = FOOTNOTE_DEF.exec(src);
        if (!match) return undefined;
        const text = match[2].replace(/\n\s+/g, ' ').trim();
        return { type: 'footnoteDef', raw: match[0], label: match[1], text, tokens: this.lexer.inlineTokens(text) };
      },
      // One left where it was not gathered into the list (inside a quote or a list item).
      renderer(token) {
        return `<p>${token.number ? `<sup>${token.number}</sup> ` : ''}${this.parser.parseInline(token.tokens)}</p>\n`;
      },
    },
    {
      name: 'footnoteRef',
      level: 'inline',
      start: (src) => src.match(/\[\^/)?.index,
      tokenizer(src) {
        const match = FOOTNOTE_REF.exec(src);
        return match ? { type: 'footnoteRef', raw: match[0], label: match[1] } : undefined;
      },
      renderer(token) {
        if (!token.number) return escapeText(token.raw); // no such definition: the text as written
        return `<sup title="${escapeText(token.title)}">${token.number}</sup>`;
      },
    },
    {
      name: 'footnotes',
      renderer(token) {
        const items = token.items.map((d) => `<li value="${d.number}">${this.parser.parseInline(d.tokens)}</li>`);
        return `<ol>${items.join('')}</ol>\n`;
      },
    },
  ],
});

function escapeText(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Numbers the referenced definitions and puts the top-level ones together as one list token.
function gatherFootnotes(tokens) {
  const defs = new Map();
  marked.walkTokens(tokens, (t) => t.type === 'footnoteDef' && !defs.has(t.label) && defs.set(t.label, t));
  if (!defs.size) return tokens;
  let next = 1;
  marked.walkTokens(tokens, (t) => {
    const def = t.type === 'footnoteRef' ? defs.get(t.label) : undefined;
    if (!def) return;
    def.number ||= next++;
    t.number = def.number;
    t.title = def.text.replace(/<[^>]*>/g, ''); // plain text: markup in a title is dropped by DOMPurify
  });
  for (const def of defs.values()) def.number ||= next++;
  const items = tokens.filter((t) => t.type === 'footnoteDef' && defs.get(t.label) === t).sort((a, b) => a.number - b.number);
  const first = tokens.findIndex((t) => t.type === 'footnoteDef');
  if (first < 0) return tokens;
  const rest = tokens.filter((t, i) => i === first || t.type !== 'footnoteDef');
  return rest.map((t) => (t.type === 'footnoteDef' ? { type: 'footnotes', raw: '', items } : t));
}

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
  const tokens = gatherFootnotes(marked.lexer(String(text ?? '')));
  return DOMPurify.sanitize(marked.parser(tokens), PURIFY);
}

export function Markdown({ text, className = 'markdown' }) {
  return html`<div class=${className} dangerouslySetInnerHTML=${{ __html: toSafeHtml(text) }}></div>`;
}
