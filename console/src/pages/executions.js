// The executions page: a filtered list, and one execution followed live
// with its graph, step input and output, and timeline.
import { useEffect, useState } from 'preact/hooks';
import { api, pages } from '../api.js';
import { Graph } from '../graph.js';
import { html } from '../html.js';
import { Badge, FINAL, Loading, More, Problem, STATUSES, short, useLoad, usePaged, when } from '../ui.js';
import { StepConfig } from './workflows.js';

export function Executions({ params }) {
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

export function Execution({ wid, eid }) {
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
