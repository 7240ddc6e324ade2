// The cardflow console: workflows, executions, the approvals inbox and its
// dashboard, cards and schedules over the public /v1 API. Routes live in the URL's hash
// (#/workflows/<id>/<version>), so every page can be linked and reloaded;
// the API key never appears there.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, getKey, setKey, clearKey, whenUnauthorized } from './api.js';
import { html } from './html.js';
import { Loading, Problem } from './ui.js';
import { Cards, Card } from './pages/cards.js';
import { Executions, Execution } from './pages/executions.js';
import { Inbox } from './pages/inbox.js';
import { Schedules } from './pages/schedules.js';
import { Workflows, Workflow } from './pages/workflows.js';

function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/inbox');
  useEffect(() => {
    const f = () => setHash(location.hash || '#/inbox');
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  return hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
}

// The dashboard and its chart library are a bundle of their own, read
// when the page is first opened.
const loadDashboard = () => import('./pages/dashboard.js').then((m) => m.Dashboard);

// Lazy shows the page load() answers once it has arrived.
function Lazy({ load }) {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    load().then((p) => setPage(() => p), setError);
  }, [load]);
  if (error) return html`<${Problem} error=${error} />`;
  return page ? html`<${page} />` : html`<${Loading} />`;
}

function KeyPrompt({ message, onKey }) {
  const [key, setValue] = useState('');
  const [problem, setProblem] = useState(message);
  const [busy, setBusy] = useState(false);
  const submit = async (ev) => {
    ev.preventDefault();
    setBusy(true);
    setKey(key.trim());
    try {
      await api('workflows/getOrganizationWorkflows', { query: { limit: 1 } });
      onKey();
    } catch (err) {
      clearKey();
      setProblem(err.status === 401 ? 'That key was not accepted: it is wrong or has been revoked. Enter another key.' : err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="prompt" id="main">
    <h1>cardflow console</h1>
    <form onSubmit=${submit}>
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" spellcheck="false" required value=${key}
        onInput=${(e) => setValue(e.target.value)} />
      <p class="hint">The key stays in this tab's session storage and goes only to this service's API.</p>
      <button type="submit" disabled=${busy}>Open the console</button>
      ${problem && html`<p class="problem" role="alert">${problem}</p>`}
    </form>
  </main>`;
}

function Nav({ page, onSignOut }) {
  const items = [['inbox', 'Inbox'], ['dashboard', 'Dashboard'], ['workflows', 'Workflows'], ['executions', 'Executions'], ['cards', 'Cards'], ['schedules', 'Schedules']];
  return html`<header class="top">
    <span class="brand">cardflow</span>
    <nav aria-label="Pages"><ul>
      ${items.map(([id, name]) => html`<li key=${id}><a href=${'#/' + id} aria-current=${page === id ? 'page' : undefined}>${name}</a></li>`)}
    </ul></nav>
    <button type="button" class="quiet" onClick=${onSignOut}>Sign out</button>
  </header>`;
}

// --- The app ---

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(getKey()));
  const [message, setMessage] = useState('');
  useEffect(() => {
    whenUnauthorized(() => {
      clearKey();
      setMessage('The service no longer accepts this key: it is wrong or has been revoked. Enter a key again.');
      setSignedIn(false);
    });
  }, []);
  const route = useRoute();
  if (!signedIn) return html`<${KeyPrompt} message=${message} onKey=${() => { setMessage(''); setSignedIn(true); }} />`;
  const [first, ...rest] = route;
  const [page, query] = (first || 'inbox').split('?');
  const params = new URLSearchParams(query || '');
  let body;
  if (page === 'workflows' && rest.length === 2) body = html`<${Workflow} id=${rest[0]} version=${rest[1]} />`;
  else if (page === 'workflows') body = html`<${Workflows} />`;
  else if (page === 'executions' && rest.length === 2) body = html`<${Execution} wid=${rest[0]} eid=${rest[1]} key=${rest[1]} />`;
  else if (page === 'executions') body = html`<${Executions} params=${params} />`;
  else if (page === 'cards' && rest.length === 2) body = html`<${Card} id=${rest[0]} version=${rest[1]} />`;
  else if (page === 'cards') body = html`<${Cards} />`;
  else if (page === 'schedules') body = html`<${Schedules} />`;
  else if (page === 'dashboard') body = html`<${Lazy} load=${loadDashboard} />`;
  else body = html`<${Inbox} />`;
  const signOut = () => { clearKey(); setMessage(''); setSignedIn(false); };
  return html`<${Nav} page=${page} onSignOut=${signOut} /><main id="main">${body}</main>`;
}

render(html`<${App} />`, document.getElementById('app'));