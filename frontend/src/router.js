// Hash routes (#/p/<project>/<tab>/<item>): the server serves one index.html, and back/forward work. A
// route may carry a query after `?` (#/setup?token=…, #/signin?error=…): hashQuery reads it.
import { useEffect, useState } from './lib.js';

export function parseHash(hash = location.hash) {
  return hash.replace(/^#\/?/, '').split('?')[0].split('/').filter(Boolean).map(decodeURIComponent);
}

export function hashQuery(hash = location.hash) {
  const at = hash.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : hash.slice(at + 1));
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
  location.hash = href(...parts);
}

export function href(...parts) {
  return `#/${parts.filter((p) => p !== undefined && p !== null).map(encodeURIComponent).join('/')}`;
}
