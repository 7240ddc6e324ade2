// A workflow version drawn as a graph: dagre lays the steps out top to
// bottom, preact draws them as SVG. Every step is a focusable button, so
// the graph works with the keyboard; a connection's `when` or `on` is its
// label.
import dagre from '@dagrejs/dagre';
import { html } from './html.js';

const W = 190;
const H = 54;

function edgeLabel(c) {
  if (c.on) return `on ${c.on}`;
  if (c.when) return `when ${c.when}`;
  return '';
}

export function layout(steps, connections) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 56, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const s of steps) g.setNode(s.id, { width: W, height: H });
  connections.forEach((c, i) => {
    if (!g.hasNode(c.from) || !g.hasNode(c.to)) return;
    const label = edgeLabel(c);
    g.setEdge(c.from, c.to, { label, width: label ? Math.min(label.length * 6.6 + 8, 240) : 0, height: label ? 18 : 0, labelpos: 'c' }, `e${i}`);
  });
  dagre.layout(g);
  return g;
}

// Graph draws steps and connections; taken lists the step ids an execution
// went through, waiting the one it waits at, selected the step whose
// config is shown, onSelect is called with a step id.
export function Graph({ steps, connections, taken = [], waiting = '', failed = '', selected = '', onSelect }) {
  const g = layout(steps, connections);
  const { width, height } = g.graph();
  const byId = Object.fromEntries(steps.map((s) => [s.id, s]));
  const took = new Set(taken);
  const edges = g.edges().map((e) => {
    const d = g.edge(e);
    const pts = d.points.map((p) => `${p.x},${p.y}`).join(' L ');
    const on = took.has(e.v) && took.has(e.w);
    return html`<g class=${'edge' + (on ? ' taken' : '')} key=${e.name}>
      <path d=${'M ' + pts} marker-end=${on ? 'url(#arrow-taken)' : 'url(#arrow)'} />
      ${d.label && html`<g class="edge-label" transform=${`translate(${d.x},${d.y})`}>
        <rect x=${-d.width / 2} y="-9" width=${d.width} height="18" rx="3" />
        <text text-anchor="middle" dy="4">${d.label}</text>
      </g>`}
    </g>`;
  });
  const nodes = g.nodes().map((id) => {
    const n = g.node(id);
    const s = byId[id];
    let state = '';
    if (id === waiting) state = 'waiting';
    else if (id === failed) state = 'failed';
    else if (took.has(id)) state = 'taken';
    // The name starts with the text shown, as speech input users say it.
    const shown = s.name.length > 26 ? s.name.slice(0, 25) + '…' : s.name;
    const kind = s.type + (state === 'waiting' ? ' · waiting' : '');
    const label = `${shown} ${kind}${state === 'taken' ? ', ran' : ''}${state === 'failed' ? ', failed here' : ''}`;
    const pick = () => onSelect && onSelect(id);
    return html`<g key=${id} class=${`node ${state} kind-${s.type}` + (selected === id ? ' selected' : '')}
        transform=${`translate(${n.x - W / 2},${n.y - H / 2})`} role="button" tabindex="0"
        aria-label=${label} aria-pressed=${selected === id ? 'true' : 'false'} data-step=${id}
        onClick=${pick} onKeyDown=${(ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(); } }}>
      <rect width=${W} height=${H} rx="8" />
      <text x="12" y="22" class="name">${shown}</text>
      <text x="12" y="41" class="kind">${" " + kind}</text>
    </g>`;
  });
  return html`<svg class="graph" role="group" aria-label="Steps and connections" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}>
    <defs>
      <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow" /></marker>
      <marker id="arrow-taken" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow taken" /></marker>
    </defs>
    ${edges}${nodes}
  </svg>`;
}
