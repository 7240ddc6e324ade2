// The cards page: every card's versions, and one version previewed with
// sample data.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { AdaptiveCard } from '../card.js';
import { html } from '../html.js';
import { Badge, Loading, More, Problem, groupVersions, useLoad, usePaged, when } from '../ui.js';

export function Cards() {
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

export function Card({ id, version }) {
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
