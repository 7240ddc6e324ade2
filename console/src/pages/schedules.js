// The schedules page: each published workflow's schedule, paused or
// played from here.
import { useState } from 'preact/hooks';
import { api, pages } from '../api.js';
import { html } from '../html.js';
import { Badge, Loading, Problem, useLoad, versionOf } from '../ui.js';

export function Schedules() {
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
