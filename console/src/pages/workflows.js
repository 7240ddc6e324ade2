// The workflows page: every workflow's versions, and one version's graph,
// its steps' config, publishing and a trigger form.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Graph } from '../graph.js';
import { html } from '../html.js';
import { Badge, Loading, More, Problem, groupVersions, useLoad, usePaged, versionOf, when } from '../ui.js';

export function Workflows() {
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

export function StepConfig({ step }) {
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

export function Workflow({ id, version }) {
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
