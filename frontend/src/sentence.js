// A passage's key sentence in <mark>, once the passage is rendered. The API gives the sentence as the
// source has it (Markdown syntax, line breaks); the page shows it rendered, where it may run across
// elements (a heading into its paragraph, emphasis, code). So it is found by its letters and digits
// alone, and each piece of text it covers is marked; a formula (data-math) counts by its TeX and is marked
// whole. Not found (the excerpt cut it), the sentence stands marked above the passage, as it always did.

const WORD_CHAR = /[\p{L}\p{N}]/u;
// Where a run of spaces inside the sentence may be marked; between blocks (list items, table cells…) a
// <mark> would be out of place.
const PHRASING = /^(P|LI|TD|TH|H[1-6]|A|EM|STRONG|CODE|SPAN|DEL|S|SUP|SUB|MARK|Q|B|I|U|SMALL|DT|DD)$/;

function mark(node) {
  const wrapper = document.createElement('mark');
  wrapper.setAttribute('data-sentence', '');
  node.parentNode.insertBefore(wrapper, node);
  wrapper.append(node);
}

// The text runs and formulas under `root` in document order, with their letters (case-folded) and,
// for each letter, which run holds it and where.
function readLetters(root) {
  const runs = [];
  const at = []; // per letter: [run index, offset in the run, length]
  let letters = '';
  const add = (node, text, formula) => {
    const run = runs.push({ node, formula, letters: false }) - 1;
    let offset = 0;
    for (const c of text) {
      if (WORD_CHAR.test(c)) {
        runs[run].letters = true;
        for (const lower of c.toLowerCase()) {
          letters += lower;
          at.push([run, offset, c.length]);
        }
      }
      offset += c.length;
    }
  };
  const visit = (node) => {
    for (const child of [...node.childNodes]) {
      if (child.nodeType === Node.TEXT_NODE) add(child, child.data, false);
      else if (child.nodeType === Node.ELEMENT_NODE && child.hasAttribute('data-math')) add(child, child.textContent, true);
      else if (child.nodeType === Node.ELEMENT_NODE) visit(child);
    }
  };
  visit(root);
  return { runs, at, letters };
}

// Markdown the page does not show as text: a code fence's language, a link's address, an HTML tag.
const UNSHOWN = /(?:`{3,}|~{3,})[^\s`~]*|\]\([^)\s]*\)|<\/?[a-z][^>]*>/gi;

function lettersOf(text) {
  const shown = text.replace(UNSHOWN, ' ');
  return [...shown].filter((c) => WORD_CHAR.test(c)).map((c) => c.toLowerCase()).join(''); // as readLetters folds
}

// Marks `sentence` in the rendered passage under `root`; once (a second call finds its marks).
export function markSentence(root, sentence) {
  if (!root || !sentence || root.querySelector('mark[data-sentence]')) return;
  const wanted = lettersOf(sentence);
  if (!wanted) return;
  const { runs, at, letters } = readLetters(root);
  const found = letters.indexOf(wanted);
  if (found < 0) {
    const p = document.createElement('p');
    p.className = 'sentence';
    p.append(document.createElement('mark'));
    p.firstChild.setAttribute('data-sentence', '');
    p.firstChild.textContent = sentence.replace(/\s+/g, ' ').trim();
    root.prepend(p);
    return;
  }
  const [first, start] = at[found];
  const [last, end, size] = at[found + wanted.length - 1];
  const tail = sentence.trimEnd().match(/[^\p{L}\p{N}\s]*$/u)[0]; // its closing punctuation, where the text has it
  for (let i = first; i <= last; i++) {
    const { node, formula, letters: hasLetters } = runs[i];
    if (formula) {
      if (node.getAttribute('data-math') !== 'display') mark(node);
      continue;
    }
    if (!hasLetters && !PHRASING.test(node.parentNode.nodeName)) continue;
    const from = i === first ? start : 0;
    let to = i === last ? end + size : node.length;
    if (i === last && tail && node.data.startsWith(tail, to)) to += tail.length;
    let piece = node;
    if (from > 0) piece = piece.splitText(from);
    if (to - from < piece.length) piece.splitText(to - from);
    mark(piece);
  }
}
