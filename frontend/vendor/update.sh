#!/bin/sh
# Re-vendors the frontend's libraries (and the tests' axe-core) from the npm registry at the pinned
# versions below. Run by hand when bumping a version; nothing here runs at install, test or run time.
# npm is used only to fetch the published tarballs (`npm pack`); no node_modules, no build.
set -eu
PREACT=11.2.0 HTM=3.1.1 MARKED=18.2.1 DOMPURIFY=3.5.0 AXE=4.14.1 SWAGGER=5.36.0 KATEX=0.19.1 HLJS=11.12.0
# highlight.js's grammars for the languages course material uses (the Rust book: rust, console, toml;
# Think Python: python) and other common, cheap ones (a few KB each).
HLJS_LANGUAGES="rust python bash shell json ini plaintext javascript typescript sql yaml xml css c cpp java go diff markdown"
# pdf.js shows a citation's page (screens/viewer.js), imported on first use: not preloaded (vendor/pdfjs/).
PDFJS=6.5.438
# The mind map's tidy-tree layout (screens/mindmap_view.js), imported when the map opens: d3-hierarchy has no
# dependencies and ships one ES module (pan and zoom are the screen's own pointer events).
D3H=3.1.3
here=$(cd "$(dirname "$0")" && pwd)
tests="$here/../../tests/e2e/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "preact@$PREACT" "htm@$HTM" "marked@$MARKED" "dompurify@$DOMPURIFY" "axe-core@$AXE" \
  "swagger-ui-dist@$SWAGGER" "pdfjs-dist@$PDFJS" "katex@$KATEX" "@highlightjs/cdn-assets@$HLJS" \
  "d3-hierarchy@$D3H" >/dev/null
for f in *.tgz; do mkdir "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
# Source-map comments point at files not vendored: drop them (the only change besides the import below).
strip() { sed '/^\/\/# sourceMappingURL=/d; s#//\# sourceMappingURL=[^ ]*$##' "$1"; }
strip "preact-$PREACT/package/dist/preact.mjs" > "$here/preact.mjs"
# hooks imports the bare specifier "preact"; without an import map (an inline script, which the CSP
# forbids) the browser needs a path.
strip "preact-$PREACT/package/hooks/dist/hooks.mjs" | sed 's#from"preact"#from"./preact.mjs"#' > "$here/preact-hooks.mjs"
strip "htm-$HTM/package/dist/htm.mjs" > "$here/htm.mjs"
strip "marked-$MARKED/package/lib/marked.esm.js" > "$here/marked.esm.js"
strip "dompurify-$DOMPURIFY/package/dist/purify.es.mjs" > "$here/purify.es.mjs"
cp "preact-$PREACT/package/LICENSE" "$here/LICENSE.preact"
cp "htm-$HTM/package/LICENSE" "$here/LICENSE.htm"
cp "marked-$MARKED/package/LICENSE" "$here/LICENSE.marked"
cp "dompurify-$DOMPURIFY/package/LICENSE" "$here/LICENSE.dompurify"
# pdf.js: the legacy build (phones' older browsers), minified, with its worker (no source maps in it).
mkdir -p "$here/pdfjs"
cp "pdfjs-dist-$PDFJS/package/legacy/build/pdf.min.mjs" "pdfjs-dist-$PDFJS/package/legacy/build/pdf.worker.min.mjs" "$here/pdfjs/"
cp "pdfjs-dist-$PDFJS/package/LICENSE" "$here/LICENSE.pdfjs-dist"
# The API's /docs page (backend/api_docs.py), served offline.
mkdir -p "$here/swagger-ui"
sw="swagger-ui-dist-$SWAGGER/package"
strip "$sw/swagger-ui-bundle.js" > "$here/swagger-ui/swagger-ui-bundle.js"
sed 's#/\*\# sourceMappingURL=[^ ]*\*/##' "$sw/swagger-ui.css" > "$here/swagger-ui/swagger-ui.css"
cp "$sw/LICENSE" "$sw/NOTICE" "$sw/favicon-32x32.png" "$here/swagger-ui/"
# KaTeX (math) and highlight.js (code) are imported by the app only when a text has math or code
# (frontend/src/typeset.js): folders of their own, outside index.html's preloads (the first-load budget).
mkdir -p "$here/katex/fonts" "$here/highlight/languages"
kd="katex-$KATEX/package/dist"
strip "$kd/katex.mjs" > "$here/katex/katex.mjs"
# Every browser the app supports reads woff2: the older formats are neither vendored nor named.
sed 's#,url(fonts/[^)]*\.woff) format("woff"),url(fonts/[^)]*\.ttf) format("truetype")##g' "$kd/katex.min.css" \
  > "$here/katex/katex.min.css"
cp "$kd"/fonts/*.woff2 "$here/katex/fonts/"
cp "katex-$KATEX/package/LICENSE" "$here/LICENSE.katex"
hd="highlightjs-cdn-assets-$HLJS/package"
strip "$hd/es/core.min.js" > "$here/highlight/core.min.js"
for language in $HLJS_LANGUAGES; do
  strip "$hd/es/languages/$language.min.js" > "$here/highlight/languages/$language.min.js"
done
cp "$hd/LICENSE" "$here/LICENSE.highlight"  # no "js" at its end: index.html preloads vendor/*.*js
mkdir -p "$here/d3"
strip "d3-hierarchy-$D3H/package/dist/d3-hierarchy.min.mjs" > "$here/d3/d3-hierarchy.min.mjs"
cp "d3-hierarchy-$D3H/package/LICENSE" "$here/LICENSE.d3-hierarchy"
mkdir -p "$tests"
cp "axe-core-$AXE/package/axe.min.js" "$tests/axe.min.js"
cp "axe-core-$AXE/package/LICENSE" "$tests/LICENSE.axe-core"
{
  echo "# Vendored from the npm registry by frontend/vendor/update.sh: package@version sha512 (npm integrity)"
  for p in "preact@$PREACT" "htm@$HTM" "marked@$MARKED" "dompurify@$DOMPURIFY" "axe-core@$AXE" "swagger-ui-dist@$SWAGGER" "pdfjs-dist@$PDFJS" \
    "katex@$KATEX" "@highlightjs/cdn-assets@$HLJS" "d3-hierarchy@$D3H"; do
    echo "$p $(npm view "$p" dist.integrity)"
  done
} > "$here/VERSIONS"
