// The dashboard: how approvals go, from getApprovalStats. Chart.js is
// imported here only, and main.js imports this module when the page is
// opened, so the other pages never load the chart library.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip,
} from 'chart.js';
import { api, pages } from '../api.js';
import { html } from '../html.js';
import { Loading, Problem, useLoad } from '../ui.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

// Colours that keep a 3:1 contrast against white, one per outcome.
const OUTCOMES = [
  ['approved', 'Approved', '#116329'],
  ['rejected', 'Rejected', '#a40e26'],
  ['timed_out', 'Timed out', '#7d4e00'],
  ['overridden', 'Overridden', '#4f52b2'],
  ['cancelled', 'Cancelled', '#57606a'],
];

// duration writes milliseconds as the largest unit that fits.
export function duration(ms) {
  if (!ms) return '–';
  const units = [['d', 86400000], ['h', 3600000], ['min', 60000], ['s', 1000]];
  for (const [u, n] of units) if (ms >= n) return `${(ms / n).toFixed(ms >= 10 * n ? 0 : 1)} ${u}`;
  return `${ms} ms`;
}

// BarChart draws one Chart.js bar chart; the canvas is an image whose
// label says what it shows, and the table beside it holds the figures.
function BarChart({ label, labels, datasets, stacked = false, horizontal = false }) {
  const canvas = useRef(null);
  useEffect(() => {
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels, datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, indexAxis: horizontal ? 'y' : 'x',
        scales: { x: { stacked, beginAtZero: true, ticks: { autoSkip: true, precision: 0 } }, y: { stacked, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { display: datasets.length > 1 } },
      },
    });
    return () => chart.destroy();
  }, [JSON.stringify({ labels, datasets })]);
  return html`<div class="chart"><canvas ref=${canvas} role="img" aria-label=${label}></canvas></div>`;
}

// Figures is the table of a chart's data, for those who do not see it.
function Figures({ caption, head, rows }) {
  return html`<details class="figures"><summary>${caption}: the figures</summary>
    <table class="list"><thead><tr>${head.map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
      <tbody>${rows.map((r, i) => html`<tr key=${i}>${r.map((c, j) => html`<td key=${j}>${c}</td>`)}</tr>`)}</tbody></table></details>`;
}

export function Dashboard() {
  const [workflows] = useLoad(() => pages('workflows/getOrganizationWorkflows'), []);
  const [filter, setFilter] = useState({ workflow_id: '', days: '30' });
  const [stats, error] = useLoad(() => {
    const to = new Date();
    const from = new Date(to.getTime() - (Number(filter.days) - 1) * 86400000);
    const day = (d) => d.toISOString().slice(0, 10);
    return api('approvals/getApprovalStats', { query: { workflow_id: filter.workflow_id, from: day(from), to: day(to) } }).then((r) => r.item);
  }, [filter.workflow_id, filter.days]);
  const names = new Map((workflows || []).map((w) => [w.workflow_id, w.workflow_name]));
  const set = (k) => (e) => setFilter({ ...filter, [k]: e.target.value });
  const form = html`<form class="filters" aria-label="Choose the approvals counted" onSubmit=${(e) => e.preventDefault()}>
    <div><label for="d-workflow">Workflow</label>
      <select id="d-workflow" value=${filter.workflow_id} onChange=${set('workflow_id')}>
        <option value="">All workflows</option>
        ${[...names].map(([id, name]) => html`<option key=${id} value=${id}>${name}</option>`)}
      </select></div>
    <div><label for="d-days">Days</label>
      <select id="d-days" value=${filter.days} onChange=${set('days')}>
        ${['7', '30', '90', '365'].map((d) => html`<option key=${d} value=${d}>Last ${d} days</option>`)}
      </select></div>
  </form>`;
  if (!stats) return html`<h1>Approvals dashboard</h1>${form}${error ? html`<${Problem} error=${error} />` : html`<${Loading} />`}`;
  const s = stats;
  const decided = s.approved + s.rejected + s.overridden;
  const byDay = s.by_day;
  const approvers = s.by_approver.slice(0, 15);
  return html`<h1>Approvals dashboard</h1>
    ${form}
    <ul class="tiles" aria-label="Summary">
      <li><strong>${decided}</strong> decided</li>
      <li><strong>${s.timed_out}</strong> timed out</li>
      <li><strong>${s.pending}</strong> open</li>
      <li class=${s.overdue ? 'late' : ''}><strong>${s.overdue}</strong> overdue</li>
      <li><strong>${duration(s.cycle_time_ms.p50)}</strong> median cycle time</li>
      <li><strong>${duration(s.cycle_time_ms.p95)}</strong> 95th percentile</li>
    </ul>
    <div class="charts">
      <section aria-labelledby="c-days"><h2 id="c-days">Decisions per day</h2>
        <${BarChart} label="Approvals ended per day, by outcome" stacked=${true} labels=${byDay.map((d) => d.day.slice(5))}
          datasets=${OUTCOMES.map(([k, name, color]) => ({ label: name, data: byDay.map((d) => d[k]), backgroundColor: color }))} />
        <${Figures} caption="Decisions per day" head=${['Day', ...OUTCOMES.map((o) => o[1])]}
          rows=${byDay.filter((d) => OUTCOMES.some(([k]) => d[k])).map((d) => [d.day, ...OUTCOMES.map(([k]) => d[k])])} /></section>
      <section aria-labelledby="c-cycle"><h2 id="c-cycle">Cycle time</h2>
        <${BarChart} label="Approvals decided, by time from opening to decision"
          labels=${s.cycle_time_ms.histogram.map((b) => duration(b.ms))}
          datasets=${[{ label: 'Approvals', data: s.cycle_time_ms.histogram.map((b) => b.count), backgroundColor: '#4f52b2' }]} />
        <p class="hint">Median ${duration(s.cycle_time_ms.p50)}, 95th percentile ${duration(s.cycle_time_ms.p95)}, longest ${duration(s.cycle_time_ms.max)} (each within about 5%).</p>
        <${Figures} caption="Cycle time" head=${['About', 'Approvals']} rows=${s.cycle_time_ms.histogram.map((b) => [duration(b.ms), b.count])} /></section>
      <section aria-labelledby="c-overdue"><h2 id="c-overdue">Open and overdue by workflow</h2>
        ${s.by_workflow.length === 0 ? html`<p class="empty">Nothing is open.</p>` : html`
        <${BarChart} label="Open approvals by workflow, and how many of them are overdue" horizontal=${true}
          labels=${s.by_workflow.map((w) => names.get(w.workflow_id) || w.workflow_id)}
          datasets=${[{ label: 'Overdue', data: s.by_workflow.map((w) => w.overdue), backgroundColor: '#a40e26' },
            { label: 'Open, not overdue', data: s.by_workflow.map((w) => w.pending - w.overdue), backgroundColor: '#57606a' }]} stacked=${true} />`}
        <${Figures} caption="Open and overdue by workflow" head=${['Workflow', 'Open', 'Overdue']}
          rows=${s.by_workflow.map((w) => [names.get(w.workflow_id) || w.workflow_id, w.pending, w.overdue])} /></section>
      <section aria-labelledby="c-load"><h2 id="c-load">Load per approver</h2>
        ${approvers.length === 0 ? html`<p class="empty">No approver answered or is waited on.</p>` : html`
        <${BarChart} label="Answers given and approvals waiting, per approver" horizontal=${true} stacked=${true}
          labels=${approvers.map((a) => a.approver)}
          datasets=${[{ label: 'Answered', data: approvers.map((a) => a.answered), backgroundColor: '#116329' },
            { label: 'Waiting on them', data: approvers.map((a) => a.pending), backgroundColor: '#7d4e00' }]} />`}
        <${Figures} caption="Load per approver" head=${['Approver', 'Answered', 'Approved', 'Rejected', 'Median answer time', 'Waiting']}
          rows=${s.by_approver.map((a) => [a.approver, a.answered, a.approved, a.rejected, duration(a.p50_ms), a.pending])} /></section>
    </div>
    ${s.pending_partial && html`<p class="hint">More approvals are open than one read counts; the open figures are a lower bound.</p>`}`;
}
