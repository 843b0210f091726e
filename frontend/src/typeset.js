// KaTeX (math) and highlight.js (code), imported the first time a text needs them: together about
// 180 KB gzipped, more than the app's first load may carry (benchmarks/load/web_budget.py), and most
// screens need neither. Until they have loaded, code shows as plain text and a formula as its TeX.
//
// Math is typeset into the page's DOM (katex.render), not pasted in as HTML: KaTeX positions its glyphs
// with inline styles, which the CSP (style-src 'self', backend/frontend.py) refuses in parsed markup but
// allows when set through the DOM. Its output then goes through a DOMPurify of its own that keeps
// KaTeX's elements, MathML (what screen readers read) and the SVG it draws, and nothing else.
import DOMPurify from '../vendor/purify.es.mjs';

// The grammars frontend/vendor/update.sh vendors (aliases too: console, toml, sh, html, text…).
const LANGUAGES = ['rust', 'python', 'bash', 'shell', 'json', 'ini', 'plaintext', 'javascript', 'typescript', 'sql',
  'yaml', 'xml', 'css', 'c', 'cpp', 'java', 'go', 'diff', 'markdown'];

const libraries = {}; // name -> the library once loaded (immutable code, cached for the tab)
const loading = {}; // name -> the Promise of it

const LOADERS = {
  async highlight() {
    const [{ default: hljs }, ...grammars] = await Promise.all([
      import('../vendor/highlight/core.min.js'),
      ...LANGUAGES.map((name) => import(`../vendor/highlight/languages/${name}.min.js`)),
    ]);
    LANGUAGES.forEach((name, i) => hljs.registerLanguage(name, grammars[i].default));
    return hljs;
  },
  async katex() {
    // Its stylesheet first: without it the MathML copy would show beside the typeset formula.
    const styles = new Promise((resolve, reject) => {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = new URL('../vendor/katex/katex.min.css', import.meta.url).href;
      link.onload = resolve;
      link.onerror = reject;
      document.head.append(link);
    });
    const [{ default: katex }] = await Promise.all([import('../vendor/katex/katex.mjs'), styles]);
    return katex;
  },
};

export function loaded(name) {
  return libraries[name] || null;
}

export function load(name) {
  loading[name] ||= LOADERS[name]().then(
    (library) => (libraries[name] = library),
    (error) => {
      delete loading[name]; // a later text tries again
      throw error;
    },
  );
  return loading[name];
}

// The libraries a rendered text (toSafeHtml's output) still waits for.
export function missing(safeHtml) {
  const wants = [];
  if (!libraries.highlight && safeHtml.includes('<code class="language-')) wants.push('highlight');
  if (!libraries.katex && safeHtml.includes('data-math=')) wants.push('katex');
  return wants;
}

// A code block's HTML, highlighted, or null (highlight.js not loaded, or the language unknown to it).
// `lang` is the fence's first word: "rust,ignore" (the Rust book) is Rust.
export function highlightCode(code, lang) {
  const hljs = libraries.highlight;
  if (!hljs || !lang || !hljs.getLanguage(lang)) return null;
  return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
}

const purifyMath = DOMPurify(window); // its own instance: the app's hooks (links, code classes) are not for it
const KATEX_OUTPUT = {
  IN_PLACE: true,
  USE_PROFILE: { html: true, mathMl: true, svg: true },
  ADD_TAGS: ['semantics', 'annotation'], // the MathML's TeX source, for assistive technology
  ADD_ATTR: ['encoding'],
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'image', 'iframe', 'a', 'use',
    'foreignobject', 'animate', 'set'],
  FORBID_ATTR: ['id', 'href', 'xlink:href'],
};
const KATEX_OPTIONS = {
  output: 'htmlAndMathml', // the HTML is aria-hidden; screen readers read the MathML
  throwOnError: false, // a formula KaTeX cannot parse shows as its source, in the error colour
  trust: false, // no \href, \includegraphics, \htmlClass…: TeX from a document or a model is untrusted
  strict: 'ignore',
  maxSize: 20,
  maxExpand: 500,
};

// Typesets each formula placeholder under `root` (data-math="inline" or "display", the TeX as its text)
// that is not typeset yet. Nothing happens until KaTeX has loaded.
export function typesetMath(root) {
  const katex = libraries.katex;
  if (!katex || !root) return;
  for (const node of root.querySelectorAll('[data-math]:not([data-typeset])')) {
    const tex = node.textContent;
    katex.render(tex, node, { ...KATEX_OPTIONS, displayMode: node.dataset.math === 'display' });
    purifyMath.sanitize(node, KATEX_OUTPUT);
    node.setAttribute('data-typeset', '');
  }
}

// A wide table or formula scrolls sideways on a phone: a keyboard must reach it too (axe:
// scrollable-region-focusable), so the ones that do scroll take the focus.
export function reachableScrollers(root) {
  if (!root) return;
  for (const node of root.querySelectorAll('pre, table, [data-math=display]')) {
    if (node.scrollWidth > node.clientWidth && !node.hasAttribute('tabindex')) node.setAttribute('tabindex', '0');
  }
}
