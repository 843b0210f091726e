import { html, render } from './lib.js';
import { App } from './app.js';

const root = document.getElementById('root');
root.textContent = ''; // the "Loading…" placeholder (Preact 11 renders next to what it finds)
render(html`<${App} />`, root);
