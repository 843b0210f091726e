// Markdown from the API (answers, notes, passages, flashcards) is parsed by marked and the HTML it makes is
// cleaned by DOMPurify before it reaches the page: a document or a model reply can carry raw HTML, and
// marked passes it through by design. Nothing else from the API is ever rendered as HTML: every other text
// goes into the page as text (htm/Preact create text nodes).
//
// Rendered as the book shows it: headings, lists, tables, code with its lines (highlighted by highlight.js
// once loaded) and math ($…$, \(…\), $$…$$, \[…\]) typeset by KaTeX (frontend/src/typeset.js); a
// passage's key sentence marked (frontend/src/sentence.js).

import { html, useEffect, useLayoutEffect, useMemo, useRef, useState } from './lib.js';
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';
import { highlightCode, load, loaded, missing, reachableScrollers, typesetMath } from './typeset.js';
import { markSentence } from './sentence.js';

const marked = new Marked({ gfm: true, breaks: false, async: false });

// Math. A dollar amount is not ("costs $5 and $10"): an inline $ formula opens with no space after the $,
// closes with no space before it and no digit after it, and stays within a paragraph.
const INLINE_MATH = /^\$(?![\s$])((?:\\[\s\S]|[^\\$\n]|\n(?![ \t]*\n))+?)(?<!\s)\$(?!\d)/;
const INLINE_FORMS = [
  [/^\$\$((?:\\[\s\S]|[^\\$]|\$(?!\$))+?)\$\$/, 'display'], // $$…$$ inside a paragraph
  [/^\\\[([\s\S]+?)\\\]/, 'display'],
  [/^\\\(([\s\S]+?)\\\)/, 'inline'],
  [INLINE_MATH, 'inline'],
];
const BLOCK_MATH = /^ {0,3}(?:\$\$((?:\\[\s\S]|[^\\$]|\$(?!\$))+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n+|$)/;

// A placeholder with the TeX as its text (what shows until KaTeX has loaded); typesetMath fills it. A
// <span> inside a paragraph (even a displayed formula: a <div> would end the paragraph), else a <div>.
function mathPlaceholder(tex, form, tag = 'span') {
  return `<${tag} data-math="${form}">${escapeText(tex.trim())}</${tag}>`;
}

marked.use({
  extensions: [
    {
      name: 'blockMath',
      level: 'block',
      start: (src) => src.match(/^ {0,3}(?:\$\$|\\\[)/m)?.index,
      tokenizer(src) {
        const match = BLOCK_MATH.exec(src);
        return match ? { type: 'blockMath', raw: match[0], tex: match[1] ?? match[2] } : undefined;
      },
      renderer: (token) => `${mathPlaceholder(token.tex, 'display', 'div')}\n`,
    },
    {
      name: 'inlineMath',
      level: 'inline',
      start: (src) => src.match(/\$|\\[([]/)?.index,
      tokenizer(src) {
        for (const [form, kind] of INLINE_FORMS) {
          const match = form.exec(src);
          if (match) return { type: 'inlineMath', raw: match[0], tex: match[1], form: kind };
        }
        return undefined;
      },
      renderer: (token) => mathPlaceholder(token.tex, token.form),
    },
  ],
  renderer: {
    // The fence's first word names the language ("rust,ignore" in the Rust book is Rust).
    code({ text, lang }) {
      const language = (lang || '').match(/^[\w+#-]+/)?.[0]?.toLowerCase() || '';
      const code = text.replace(/\n$/, '');
      const lit = language ? highlightCode(code, language) : null;
      const named = language ? ` class="${lit === null ? '' : 'hljs '}language-${escapeText(language)}"` : '';
      return `<pre><code${named}>${lit ?? escapeText(code)}\n</code></pre>\n`;
    },
  },
});

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
  USE_PROFILE: { html: true }, // no SVG or MathML (KaTeX's own go through typeset.js's purifier)
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'iframe'],
  FORBID_ATTR: ['style', 'id'],
};

// Classes only as highlight.js and the code renderer put them, inside code: a document's own class could
// take the app's styles (a fake button, a hidden warning).
const CODE_CLASS = /^(hljs(-[\w-]+)?|language-[\w+#-]+|[a-z]+_{1,2})$/;
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (data.attrName !== 'class') return;
  const inCode = node.nodeName === 'CODE' || (node.nodeName === 'SPAN' && node.closest('code') !== null);
  data.keepAttr = inCode && data.attrValue.split(/\s+/).every((name) => CODE_CLASS.test(name));
});

// Links open in a new tab without access to this one; only http(s) and mailto survive.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') || '';
    if (!/^(https?:|mailto:)/i.test(href)) node.removeAttribute('href');
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

// A passage quoted from the material keeps its headings' look, not their part in the page's outline
// (a screen reader's list of headings is the app's, not every quoted chunk's).
marked.use({
  extensions: [{
    name: 'quotedHeading',
    renderer(token) {
      return `<p data-heading="${token.depth}">${this.parser.parseInline(token.tokens)}</p>\n`;
    },
  }],
});

// `inline`: one line's Markdown (a question, an option), for inside a heading or a label. `quote`: a
// passage of the material (its headings quoted, above).
export function toSafeHtml(text, { inline = false, quote = false } = {}) {
  if (inline) return DOMPurify.sanitize(marked.parseInline(String(text ?? '')), PURIFY);
  const tokens = gatherFootnotes(marked.lexer(String(text ?? '')));
  if (quote) marked.walkTokens(tokens, (t) => { if (t.type === 'heading') t.type = 'quotedHeading'; });
  return DOMPurify.sanitize(marked.parser(tokens), PURIFY);
}

// Renders `text` (a <div>, or a <span> when `inline`), with the `highlight` sentence marked. Math and
// code are typeset once their library has loaded (asked for here, the first time a text needs it): the
// text is rendered again, highlighted code and all, and its formulas typeset in place.
export function Markdown({ text, className = 'markdown', highlight = '', inline = false, quote = false }) {
  const box = useRef(null);
  const [, setReady] = useState(0);
  const codeReady = Boolean(loaded('highlight'));
  const safe = useMemo(() => toSafeHtml(text, { inline, quote }), [text, inline, quote, codeReady]);
  const wants = missing(safe);
  useEffect(() => {
    let gone = false;
    if (wants.length) Promise.all(wants.map(load)).then(() => gone || setReady((n) => n + 1), () => {});
    return () => { gone = true; };
  }, [wants.join()]);
  const mathReady = Boolean(loaded('katex'));
  // The sentence first: it finds a formula by its TeX, which typesetting replaces.
  useLayoutEffect(() => {
    markSentence(box.current, highlight);
    typesetMath(box.current);
    reachableScrollers(box.current);
  }, [safe, highlight, mathReady]);
  // A new sentence to mark, a new element: the old marks go with the old one.
  const Tag = inline ? 'span' : 'div';
  return html`<${Tag} key=${highlight} ref=${box} class=${className} dangerouslySetInnerHTML=${{ __html: safe }}></${Tag}>`;
}
