// The cardflow console: workflows, executions, the approvals inbox, cards
// and schedules over the public /v1 API. Routes live in the URL's hash
// (#/workflows/<id>/<version>), so every page can be linked and reloaded;
// the API key never appears there.
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, pages, readPages, getKey, setKey, clearKey, whenUnauthorized } from './api.js';
import { Graph } from './graph.js';
import { AdaptiveCard } from './card.js';
import { html } from './html.js';

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
const STATUSES = ['RUNNING', 'WAITING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

const when = (ms) => (ms ? new Date(ms).toLocaleString() : '');
const short = (v) => {
  const s = JSON.stringify(v);
  return s && s.length > 160 ? s.slice(0, 157) + '…' : s;
};

function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/inbox');
  useEffect(() => {
    const f = () => setHash(location.hash || '#/inbox');
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  return hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
}

// useLoad runs load on mount and when deps change; it answers
// [data, error, reload].
function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, error: null }));
    load().then((data) => live && setState({ data, error: null }), (error) => live && setState({ data: null, error }));
    return () => { live = false; };
  }, [...deps, n]);
  return [state.data, state.error, () => setN((x) => x + 1)];
}

// usePaged reads the first batch of a list (up to max items, following
// lastKey) on mount and when deps change; more() appends the next batch,
// read from the lastKey the last one ended at. The list is
// { items, lastKey, paged, error, busy, more, reload }; paged is whether
// more() added to it.
function usePaged(path, query, deps, max = 300) {
  const [state, setState] = useState({ items: null, lastKey: null, paged: false, error: null, busy: false });
  const [n, setN] = useState(0);
  // A batch that arrives after the list was read again from the top is
  // dropped.
  const generation = useRef(0);
  useEffect(() => {
    const g = ++generation.current;
    setState((s) => ({ ...s, error: null }));
    readPages(path, query, null, max).then(
      ({ items, lastKey }) => g === generation.current && setState({ items, lastKey, paged: false, error: null, busy: false }),
      (error) => g === generation.current && setState({ items: null, lastKey: null, paged: false, error, busy: false }));
  }, [...deps, n]);
  // The lastKey a batch was read from: a second press before the page
  // shows that batch (a held Enter key) must not read it again.
  const readFrom = useRef(null);
  const more = async () => {
    const from = state.lastKey;
    if (!from || readFrom.current === from) return;
    readFrom.current = from;
    const g = generation.current;
    setState((s) => ({ ...s, busy: true, error: null }));
    try {
      const next = await readPages(path, query, from, max);
      if (g === generation.current) setState((s) => ({ items: [...s.items, ...next.items], lastKey: next.lastKey, paged: true, error: null, busy: false }));
    } catch (error) {
      readFrom.current = null;
      if (g === generation.current) setState((s) => ({ ...s, error, busy: false }));
    }
  };
  return { ...state, more, reload: () => setN((x) => x + 1) };
}

// More offers the next batch of a list while it goes on, and says how much
// is shown once there is or was more than one batch. When the last batch is
// in and the button goes, focus moves to the line that says so, not back to
// the top of the page.
function More({ list, one, many, label }) {
  const line = useRef(null);
  const hadMore = useRef(false);
  useEffect(() => {
    if (hadMore.current && !list.lastKey && document.activeElement === document.body) line.current?.focus();
    hadMore.current = Boolean(list.lastKey);
  }, [list.lastKey]);
  if (!list.items || (!list.lastKey && !list.paged)) return null;
  const n = list.items.length;
  // aria-disabled rather than disabled while a batch loads, so the button
  // keeps the keyboard focus.
  return html`<div class="pager">
    <p class="hint" tabindex="-1" ref=${line} aria-live="polite">${n} ${n === 1 ? one : many} shown${list.lastKey ? '; more follow.' : ', all there are.'}</p>
    ${list.lastKey && html`<button type="button" onClick=${list.more} aria-disabled=${list.busy ? 'true' : undefined}
      aria-label=${label}>${list.busy ? 'More (loading…)' : 'More'}</button>`}
  </div>`;
}

const Problem = ({ error }) => error && html`<p class="problem" role="alert">${error.message}</p>`;
const Loading = () => html`<p class="loading" aria-live="polite">Loading…</p>`;
const Badge = ({ status }) => html`<span class=${'badge s-' + String(status).toLowerCase()}>${status}</span>`;

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
  const items = [['inbox', 'Inbox'], ['workflows', 'Workflows'], ['executions', 'Executions'], ['cards', 'Cards'], ['schedules', 'Schedules']];
  return html`<header class="top">
    <span class="brand">cardflow</span>
    <nav aria-label="Pages"><ul>
      ${items.map(([id, name]) => html`<li key=${id}><a href=${'#/' + id} aria-current=${page === id ? 'page' : undefined}>${name}</a></li>`)}
    </ul></nav>
    <button type="button" class="quiet" onClick=${onSignOut}>Sign out</button>
  </header>`;
}

// --- Workflows ---

function groupVersions(items, idKey, versionKey) {
  const groups = new Map();
  for (const it of items) {
    if (!groups.has(it[idKey])) groups.set(it[idKey], []);
    groups.get(it[idKey]).push(it);
  }
  for (const list of groups.values()) list.sort((a, b) => b[versionKey] - a[versionKey]);
  return [...groups.values()];
}

function versionOf(statusVersion) {
  return Number(String(statusVersion).split(/[_-]/).pop());
}

function Workflows() {
  const list = usePaged('workflows/getOrganizationWorkflows', {}, []);
  const { items, error } = list;
  if (!items) return error ? html`<${Problem} error=${error} />` : html`<${Loading} />`;
  const groups = groupVersions(items.map((w) => ({ ...w, version: versionOf(w.workflow_status_version) })), 'workflow_id', 'version');
  return html`<h1>Workflows</h1>
    <table class="list">
      <thead><tr><th scope="col">Workflow</th><th scope="col">Versions</th><th scope="col">Modified</th></tr></thead>
      <tbody>${groups.map((vs) => html`<tr key=${vs[0].workflow_id}>
        <td><a href=${`#/workflows/${vs[0].workflow_id}/${vs[0].version}`}>${vs[0].workflow_name}</a><div class="id">${vs[0].workflow_id}</div></td>
        <td><ul class="versions">${vs.map((v) => html`<li key=${v.version}><a href=${`#/workflows/${v.workflow_id}/${v.version}`}
          aria-label=${`v${v.version} of ${v.workflow_name}, ${v.workflow_status}`}>v${v.version}</a> <${Badge} status=${v.workflow_status} /></li>`)}</ul></td>
        <td>${when(vs[0].modified_on)}</td>
      </tr>`)}</tbody>
    </table>
    <${Problem} error=${error} />
    <${More} list=${list} one="workflow version" many="workflow versions" label="More workflow versions" />`;
}

function StepConfig({ step }) {
  if (!step) return html`<p class="hint">Select a step (click, or Tab and Enter) to see its config.</p>`;
  return html`<section class="config" aria-label="Selected step">
    <h2>${step.name}</h2>
    <p><span class="kind">${step.type}</span> <code>${step.id}</code></p>
    <pre>${JSON.stringify(step.config || {}, null, 2)}</pre>
  </section>`;
}

function TriggerForm({ wf }) {
  const [input, setInput] = useState('{}');
  const [pid, setPid] = useState('');
  const [problem, setProblem] = useState(null);
  const submit = async (ev) => {
    ev.preventDefault();
    setProblem(null);
    let body;
    try {
      body = JSON.parse(input);
    } catch (err) {
      setProblem(new Error(`The input is not JSON: ${err.message}`));
      return;
    }
    try {
      const out = await api(`workflows/triggerworkflow/${encodeURIComponent(wf.workflow_id)}/${wf.workflow_version}`, { query: { process_id: pid.trim() }, body });
      location.hash = `#/executions/${wf.workflow_id}/${out.service_execution_id}`;
    } catch (err) {
      setProblem(err);
    }
  };
  return html`<form class="trigger" onSubmit=${submit} aria-label="Trigger an execution">
    <h2>Trigger an execution</h2>
    <label for="trigger-pid">Process id (optional)</label>
    <input id="trigger-pid" value=${pid} onInput=${(e) => setPid(e.target.value)} />
    <label for="trigger-input">Input (JSON)</label>
    <textarea id="trigger-input" rows="5" value=${input} onInput=${(e) => setInput(e.target.value)}></textarea>
    <button type="submit">Trigger</button>
    <${Problem} error=${problem} />
  </form>`;
}

function Workflow({ id, version }) {
  const [wf, error, reload] = useLoad(() => api('workflows/getWorkflowById', { query: { workflow_id: id, workflow_version: version } }).then((r) => r.item), [id, version]);
  const [selected, setSelected] = useState('');
  const [problem, setProblem] = useState(null);
  if (error) return html`<${Problem} error=${error} />`;
  if (!wf) return html`<${Loading} />`;
  const publish = async () => {
    setProblem(null);
    try {
      await api('workflows/publishWorkflow', { body: { workflow_id: id, workflow_version: Number(version) } });
      reload();
    } catch (err) {
      setProblem(err);
    }
  };
  const step = wf.workflow_steps.find((s) => s.id === selected);
  return html`<h1>${wf.workflow_name} <span class="version">v${wf.workflow_version}</span> <${Badge} status=${wf.workflow_status} /></h1>
    <p class="id">${wf.workflow_id} · <a href=${`#/executions?workflow=${wf.workflow_id}`}>executions</a></p>
    ${wf.workflow_status !== 'ACTIVE' && html`<button type="button" onClick=${publish}>Publish version ${wf.workflow_version}</button>`}
    <${Problem} error=${problem} />
    <div class="split">
      <div class="graph-box"><${Graph} steps=${wf.workflow_steps} connections=${wf.workflow_connections} selected=${selected} onSelect=${setSelected} /></div>
      <aside><${StepConfig} step=${step} />${wf.workflow_status === 'ACTIVE' && html`<${TriggerForm} wf=${wf} />`}</aside>
    </div>`;
}

// --- Executions ---

function Executions({ params }) {
  const [workflows] = useLoad(() => pages('workflows/getOrganizationWorkflows'), []);
  const [filter, setFilter] = useState({ workflow_id: params.get('workflow') || '', status: '', process_id: '', after: '', before: '' });
  const [shown, setShown] = useState(filter);
  // Filters beyond the workflow need searchExecutions; without them the
  // plain lists answer. Each takes its own lastKey back for the next page.
  const f = shown;
  const [path, query] = f.status || f.process_id || f.after || f.before
    ? ['workflows/searchExecutions', {
      workflow_id: f.workflow_id, status: f.status, process_id: f.process_id.trim(),
      created_after: f.after && new Date(f.after).getTime(), created_before: f.before && new Date(f.before).getTime(),
    }]
    : f.workflow_id ? ['workflows/getWorkflowExecutionHistory', { workflow_id: f.workflow_id }] : ['workflows/getOrganizationExecutions', {}];
  const list = usePaged(path, query, [JSON.stringify(shown)], 30);
  const { items, error } = list;
  const names = new Map((workflows || []).map((w) => [w.workflow_id, w.workflow_name]));
  const set = (k) => (e) => setFilter({ ...filter, [k]: e.target.value });
  return html`<h1>Executions</h1>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); setShown(filter); }} aria-label="Filter executions">
      <div><label for="f-workflow">Workflow</label>
        <select id="f-workflow" value=${filter.workflow_id} onChange=${set('workflow_id')}>
          <option value="">All workflows</option>
          ${[...names].map(([id, name]) => html`<option key=${id} value=${id}>${name}</option>`)}
        </select></div>
      <div><label for="f-status">Status</label>
        <select id="f-status" value=${filter.status} onChange=${set('status')}>
          <option value="">Any status</option>${STATUSES.map((s) => html`<option key=${s} value=${s}>${s}</option>`)}
        </select></div>
      <div><label for="f-pid">Process id</label><input id="f-pid" value=${filter.process_id} onInput=${set('process_id')} /></div>
      <div><label for="f-after">Started after</label><input id="f-after" type="datetime-local" value=${filter.after} onInput=${set('after')} /></div>
      <div><label for="f-before">Started before</label><input id="f-before" type="datetime-local" value=${filter.before} onInput=${set('before')} /></div>
      <div><button type="submit">Filter</button></div>
    </form>
    <${Problem} error=${error} />
    ${!items && !error && html`<${Loading} />`}
    ${items && html`<table class="list">
      <thead><tr><th scope="col">Execution</th><th scope="col">Workflow</th><th scope="col">Status</th><th scope="col">At step</th><th scope="col">Started</th></tr></thead>
      <tbody>${items.map((x) => html`<tr key=${x.workflow_execution_id}>
        <td><a href=${`#/executions/${x.workflow_id}/${x.workflow_execution_id}`}>${x.workflow_execution_id}</a></td>
        <td>${x.workflow_details?.workflow_name || names.get(x.workflow_id) || x.workflow_id} v${x.workflow_version}</td>
        <td><${Badge} status=${x.status} /></td><td>${x.workflow_current_state}</td><td>${when(x.created_on)}</td>
      </tr>`)}</tbody>
    </table>
    ${items.length === 0 && !list.lastKey && html`<p>No executions match.</p>`}`}
    <${More} list=${list} one="execution" many="executions" label="More executions" />`;
}

// useExecution reads an execution, then follows it with waitForExecution
// (until=change): the service answers when it changes, so the page updates
// without polling, until it is final or the page goes away.
function useExecution(wid, eid) {
  const [state, setState] = useState({ x: null, error: null });
  const [n, setN] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    (async () => {
      try {
        let x = (await api('workflows/getWorkflowExecutionById', { query: { workflow_id: wid, workflow_execution_id: eid }, signal: stop.signal })).item;
        setState({ x, error: null });
        while (!FINAL.has(x.status) && !stop.signal.aborted) {
          x = (await api('workflows/waitForExecution', {
            query: { workflow_id: wid, workflow_execution_id: eid, until: 'change', since: x.modified_on, timeout: 25 }, signal: stop.signal,
          })).item;
          setState({ x, error: null });
        }
      } catch (error) {
        if (!stop.signal.aborted) setState((s) => ({ x: s.x, error }));
      }
    })();
    return () => stop.abort();
  }, [wid, eid, n]);
  return [state.x, state.error, () => setN((v) => v + 1)];
}

function Execution({ wid, eid }) {
  const [x, error, reload] = useExecution(wid, eid);
  const [selected, setSelected] = useState('');
  const [problem, setProblem] = useState(null);
  if (!x) return error ? html`<${Problem} error=${error} />` : html`<${Loading} />`;
  const events = x.workflow_event_log?.events || [];
  const logs = x.condensed_logs || {};
  const taken = [...new Set(events.filter((e) => e.step_id).map((e) => e.step_id))];
  const last = events[events.length - 1] || {};
  const waiting = x.status === 'WAITING' ? (last.step_id || '') : '';
  const failed = x.status === 'FAILED' ? (last.step_id || '') : '';
  const cancel = async () => {
    setProblem(null);
    try {
      await api('workflows/cancelExecution', { body: { workflow_id: wid, workflow_execution_id: eid, reason: 'cancelled in the console' } });
      reload();
    } catch (err) {
      setProblem(err);
    }
  };
  const steps = x.workflow_details?.workflow_steps || [];
  const step = steps.find((s) => s.id === selected);
  return html`<h1>${x.workflow_details?.workflow_name || x.workflow_id} <span class="version">v${x.workflow_version}</span></h1>
    <p class="id">Execution ${x.workflow_execution_id} · started ${when(x.created_on)}</p>
    <p class="status-line" aria-live="polite">Status <span id="execution-status"><${Badge} status=${x.status} /></span> at <strong>${x.workflow_current_state}</strong>
      ${!FINAL.has(x.status) && html` <span class="live">following live</span>`}</p>
    ${!FINAL.has(x.status) && html`<button type="button" class="danger" onClick=${cancel}>Cancel execution</button>`}
    <${Problem} error=${problem || error} />
    <div class="split">
      <div class="graph-box"><${Graph} steps=${steps} connections=${x.workflow_details?.workflow_connections || []}
        taken=${taken} waiting=${waiting} failed=${failed} selected=${selected} onSelect=${setSelected} /></div>
      <aside><${StepConfig} step=${step} />
        ${step && logs[step.id] && html`<h3>Input</h3><pre>${JSON.stringify(logs[step.id].input, null, 2)}</pre><h3>Output</h3><pre>${JSON.stringify(logs[step.id].output, null, 2)}</pre>`}
      </aside>
    </div>
    <h2>Timeline</h2>
    <ol class="timeline">${events.map((e, i) => {
      const log = e.type === 'StepFinished' && logs[e.step_id];
      return html`<li key=${i} class=${'ev ev-' + e.type}>
        <time datetime=${new Date(e.at).toISOString()}>${new Date(e.at).toLocaleTimeString()}</time>
        <span class="ev-type">${e.type}</span> ${e.step && html`<span class="ev-step">${e.step}</span>`} ${e.message && html`<span class="ev-msg">${e.message}</span>`}
        ${log && html`<div class="io"><span>in <code>${short(log.input)}</code></span> <span>out <code>${short(log.output)}</code></span></div>`}
      </li>`;
    })}</ol>
    ${x.workflow_event_log?.total > events.length && html`<p class="hint">${x.workflow_event_log.total - events.length} earlier events are not kept.</p>`}`;
}

// --- Approvals inbox ---

function ApprovalCard({ a, onDone }) {
  const [problem, setProblem] = useState(null);
  const [to, setTo] = useState('');
  const [comment, setComment] = useState('');
  const answer = useCallback(async (data) => {
    setProblem(null);
    const decision = data.decision;
    if (decision !== 'approve' && decision !== 'reject') {
      setProblem(new Error('This action is not an answer: it has no decision approve or reject.'));
      return;
    }
    try {
      await api('approvals/answerApproval', { body: { approval_id: a.approval_id, decision, comment: String(data.comment || '') } });
      onDone(`${decision === 'approve' ? 'Approved' : 'Rejected'}: ${a.step_name} (${a.process_id || a.workflow_execution_id})`);
    } catch (err) {
      setProblem(err);
    }
  }, [a.approval_id]);
  const reassign = async (ev) => {
    ev.preventDefault();
    setProblem(null);
    try {
      await api('approvals/reassignApproval', { body: { approval_id: a.approval_id, to: to.trim() } });
      onDone(`Reassigned to ${to.trim()}: ${a.step_name}`);
    } catch (err) {
      setProblem(err);
    }
  };
  const fid = a.approval_id;
  return html`<article class="approval" aria-labelledby=${'t-' + fid}>
    <h2 id=${'t-' + fid}>${a.step_name}</h2>
    <p class="meta">${a.triggered_by ? `Requested by ${a.triggered_by} · ` : ''}Process ${a.process_id || '–'} · waiting since ${when(a.created_on)} · ${a.policy} of ${a.approvers.join(', ')}
      ${a.answers?.length ? ` · ${a.answers.length} answered` : ''}</p>
    <${AdaptiveCard} payload=${a.card_payload} onAction=${answer} label=${'Card of ' + a.step_name} />
    <details class="more">
      <summary>Reject with a comment${a.allow_reassign ? ', or reassign' : ''}</summary>
      <form onSubmit=${(e) => { e.preventDefault(); answer({ decision: 'reject', comment }); }}>
        <label for=${'c-' + fid}>Comment</label>
        <textarea id=${'c-' + fid} rows="2" value=${comment} onInput=${(e) => setComment(e.target.value)}></textarea>
        <button type="submit" class="danger">Reject</button>
      </form>
      ${a.allow_reassign && html`<form onSubmit=${reassign}>
        <label for=${'r-' + fid}>Reassign to (e-mail or UPN)</label>
        <input id=${'r-' + fid} value=${to} required onInput=${(e) => setTo(e.target.value)} />
        <button type="submit">Reassign</button>
      </form>`}
    </details>
    <${Problem} error=${problem} />
    <p class="id"><a href=${`#/executions/${a.workflow_id}/${a.workflow_execution_id}`}>Open the execution</a></p>
  </article>`;
}

function Inbox() {
  // The API lists newest first; the inbox reads the pages and shows the
  // oldest first, as the one that has waited longest comes first. Beyond
  // the first batch, More reads older ones, which go above these.
  const list = usePaged('approvals/getPendingApprovals', {}, []);
  const { error, reload } = list;
  const items = list.items && [...list.items].sort((a, b) => a.created_on - b.created_on);
  const [done, setDone] = useState('');
  useEffect(() => {
    // Marks the first render of the list, which the browser test measures.
    if (items && performance.getEntriesByName('inbox-rendered').length === 0) performance.mark('inbox-rendered');
  }, [items]);
  const onDone = useCallback((msg) => { setDone(msg); reload(); }, []);
  return html`<h1>Approvals inbox</h1>
    <p class="hint">What waits on the person of this key (on anyone, for an admin key), oldest first.</p>
    <p aria-live="polite" class="done">${done}</p>
    <${Problem} error=${error} />
    ${!items && !error && html`<${Loading} />`}
    ${items && items.length === 0 && !list.lastKey && html`<p class="empty">Nothing waits for an answer.</p>`}
    <${More} list=${list} one="approval" many="approvals" label="More approvals, older than these" />
    <div class="cards">${(items || []).map((a) => html`<${ApprovalCard} key=${a.approval_id + a.revision} a=${a} onDone=${onDone} />`)}</div>`;
}

// --- Cards ---

function Cards() {
  const list = usePaged('adaptive-cards/getOrganizationCards', {}, []);
  const { items, error } = list;
  if (!items) return error ? html`<${Problem} error=${error} />` : html`<${Loading} />`;
  const groups = groupVersions(items, 'card_id', 'card_version');
  return html`<h1>Cards</h1>
    <table class="list">
      <thead><tr><th scope="col">Card</th><th scope="col">Versions</th><th scope="col">Created</th></tr></thead>
      <tbody>${groups.map((vs) => html`<tr key=${vs[0].card_id}>
        <td><a href=${`#/cards/${vs[0].card_id}/${vs[0].card_version}`}>${vs[0].card_name}</a><div class="id">${vs[0].card_id}</div></td>
        <td><ul class="versions">${vs.map((v) => html`<li key=${v.card_version}><a href=${`#/cards/${v.card_id}/${v.card_version}`}
          aria-label=${`v${v.card_version} of ${v.card_name}, ${v.status}`}>v${v.card_version}</a> <${Badge} status=${v.status} /></li>`)}</ul></td>
        <td>${when(vs[0].created_on)}</td>
      </tr>`)}</tbody>
    </table>
    <${Problem} error=${error} />
    <${More} list=${list} one="card version" many="card versions" label="More card versions" />`;
}

function Card({ id, version }) {
  const [card, error] = useLoad(() => api('adaptive-cards/getCardById', { query: { card_id: id, card_version: version } }).then((r) => r.item), [id, version]);
  const [data, setData] = useState('{\n  "requester": "Ann Example",\n  "item": "Laptop",\n  "amount": 1840\n}');
  const [preview, setPreview] = useState(null);
  const [problem, setProblem] = useState(null);
  if (error) return html`<${Problem} error=${error} />`;
  if (!card) return html`<${Loading} />`;
  const show = async (ev) => {
    ev.preventDefault();
    setProblem(null);
    try {
      const out = await api('adaptive-cards/previewCard', { body: { card_id: id, card_version: Number(version), data: JSON.parse(data) } });
      setPreview(out.item);
    } catch (err) {
      setProblem(err);
    }
  };
  return html`<h1>${card.card_name} <span class="version">v${card.card_version}</span> <${Badge} status=${card.status} /></h1>
    <p class="id">${card.card_id}</p>
    <div class="split">
      <form class="preview-form" onSubmit=${show} aria-label="Preview with sample data">
        <label for="card-data">Sample data (JSON)</label>
        <textarea id="card-data" rows="8" value=${data} onInput=${(e) => setData(e.target.value)}></textarea>
        <button type="submit">Preview</button>
        <${Problem} error=${problem} />
        <details><summary>Template</summary><pre>${JSON.stringify(card.card_payload, null, 2)}</pre></details>
      </form>
      <div class="preview">${preview ? html`<${AdaptiveCard} payload=${preview} label="Preview" />` : html`<p class="hint">The card expanded with the sample data, through the same templating card steps use, shows here.</p>`}</div>
    </div>`;
}

// --- Schedules ---

function Schedules() {
  // A workflow's schedule is its latest published version's; the page asks
  // each published workflow for it, and pause or play answer the new state.
  const [list, error] = useLoad(async () => {
    // Only versions whose trigger is a SCHEDULE have one, so only those are
    // asked (a 404 would show as an error in the browser's console).
    const all = await pages('workflows/getOrganizationWorkflows');
    const published = new Map();
    for (const w of all.filter((x) => x.workflow_status === 'ACTIVE')) {
      const v = versionOf(w.workflow_status_version);
      if (!published.has(w.workflow_id) || published.get(w.workflow_id) < v) published.set(w.workflow_id, v);
    }
    const out = [];
    for (const [id, version] of published) {
      const wf = (await api('workflows/getWorkflowById', { query: { workflow_id: id, workflow_version: version } })).item;
      if (!wf.workflow_steps.some((st) => st.type === 'trigger' && st.config?.kind === 'SCHEDULE')) continue;
      out.push({ name: wf.workflow_name, ...(await api('workflows/getWorkflowSchedule', { query: { workflow_id: id } })).item });
    }
    return out;
  }, []);
  const [states, setStates] = useState({});
  const [problem, setProblem] = useState(null);
  const toggle = async (sc, action) => {
    setProblem(null);
    try {
      const out = await api('workflows/toggleScheduledWorkflow', { body: { workflow_id: sc.workflow_id, workflow_version: sc.workflow_version, action } });
      setStates((s) => ({ ...s, [sc.workflow_id]: out }));
    } catch (err) {
      setProblem(err);
    }
  };
  if (error) return html`<${Problem} error=${error} />`;
  if (!list) return html`<${Loading} />`;
  return html`<h1>Schedules</h1>
    <${Problem} error=${problem} />
    ${list.length === 0 && html`<p>No published workflow runs on a schedule.</p>`}
    <table class="list">
      <thead><tr><th scope="col">Workflow</th><th scope="col">Schedule</th><th scope="col">State and next runs</th><th scope="col">Actions</th></tr></thead>
      <tbody>${list.map((sc) => {
        const st = states[sc.workflow_id] || sc;
        return html`<tr key=${sc.workflow_id}>
          <td><a href=${`#/workflows/${sc.workflow_id}/${sc.workflow_version}`}>${sc.name}</a> v${sc.workflow_version}</td>
          <td><code>${sc.expression}</code> ${sc.timezone || 'UTC'}</td>
          <td aria-live="polite" class="schedule-state"><${Badge} status=${st.status} />
            ${st.next_runs.length ? html`<ul class="runs" aria-label="Next runs">${st.next_runs.map((r) => html`<li key=${r}>${r}</li>`)}</ul>` : ' no runs while paused'}</td>
          <td class="actions">${st.status === 'ACTIVE'
            ? html`<button type="button" onClick=${() => toggle(sc, 'PAUSE')} aria-label=${'Pause ' + sc.name}>Pause</button>`
            : html`<button type="button" onClick=${() => toggle(sc, 'PLAY')} aria-label=${'Play ' + sc.name}>Play</button>`}</td>
        </tr>`;
      })}</tbody>
    </table>`;
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
  else body = html`<${Inbox} />`;
  const signOut = () => { clearKey(); setMessage(''); setSignedIn(false); };
  return html`<${Nav} page=${page} onSignOut=${signOut} /><main id="main">${body}</main>`;
}

render(html`<${App} />`, document.getElementById('app'));
