// Hash routes (#/p/<project>/<tab>/<item>): the server serves one index.html, and back/forward work.
import { useEffect, useState } from './lib.js';

export function parseHash(hash = location.hash) {
  return hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

export function useRoute() {
  const [parts, setParts] = useState(parseHash());
  useEffect(() => {
    const update = () => setParts(parseHash());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return parts;
}

export function go(...parts) {
  location.hash = `#/${parts.filter((p) => p !== undefined && p !== null).map(encodeURIComponent).join('/')}`;
}

export function href(...parts) {
  return `#/${parts.filter((p) => p !== undefined && p !== null).map(encodeURIComponent).join('/')}`;
}
