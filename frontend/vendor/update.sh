#!/bin/sh
# Re-vendors the frontend's libraries (and the tests' axe-core) from the npm registry at the pinned
# versions below. Run by hand when bumping a version; nothing here runs at install, test or run time.
# npm is used only to fetch the published tarballs (`npm pack`); no node_modules, no build.
set -eu
PREACT=11.2.0 HTM=3.1.1 MARKED=18.2.1 DOMPURIFY=3.5.0 AXE=4.14.1 SWAGGER=5.36.0
here=$(cd "$(dirname "$0")" && pwd)
tests="$here/../../tests/e2e/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "preact@$PREACT" "htm@$HTM" "marked@$MARKED" "dompurify@$DOMPURIFY" "axe-core@$AXE" \
  "swagger-ui-dist@$SWAGGER" >/dev/null
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
# The API's /docs page (backend/api_docs.py), served offline.
mkdir -p "$here/swagger-ui"
sw="swagger-ui-dist-$SWAGGER/package"
strip "$sw/swagger-ui-bundle.js" > "$here/swagger-ui/swagger-ui-bundle.js"
sed 's#/\*\# sourceMappingURL=[^ ]*\*/##' "$sw/swagger-ui.css" > "$here/swagger-ui/swagger-ui.css"
cp "$sw/LICENSE" "$sw/NOTICE" "$sw/favicon-32x32.png" "$here/swagger-ui/"
mkdir -p "$tests"
cp "axe-core-$AXE/package/axe.min.js" "$tests/axe.min.js"
cp "axe-core-$AXE/package/LICENSE" "$tests/LICENSE.axe-core"
{
  echo "# Vendored from the npm registry by frontend/vendor/update.sh: package@version sha512 (npm integrity)"
  for p in "preact@$PREACT" "htm@$HTM" "marked@$MARKED" "dompurify@$DOMPURIFY" "axe-core@$AXE" "swagger-ui-dist@$SWAGGER"; do
    echo "$p $(npm view "$p" dist.integrity)"
  done
} > "$here/VERSIONS"
