// The approvals inbox: what waits on the key's person, each with its card
// to answer, a reject with a comment, and reassignment; and the person's
// delegation while they are away.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { AdaptiveCard } from '../card.js';
import { html } from '../html.js';
import { Loading, More, Problem, usePaged, when } from '../ui.js';

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
    <h2 id=${'t-' + fid}>${a.step_name}${a.overdue ? html` <span class="overdue">overdue</span>` : ''}</h2>
    <p class="meta">${a.triggered_by ? `Requested by ${a.triggered_by} · ` : ''}Process ${a.process_id || '–'} · waiting since ${when(a.created_on)}${a.due ? ` · due ${when(a.due)}` : ''} · ${a.policy} of ${a.approvers.map((p) => standIn(a, p)).join(', ')}
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

// standIn names a listed approver, "dan, for ann" for a delegate.
function standIn(a, p) {
  const s = (a.stand_ins || []).find((x) => x.delegate === p);
  return s ? `${p}, for ${s.for}` : p;
}

// localMillis reads a datetime-local input's value as epoch milliseconds.
const localMillis = (v) => new Date(v).getTime();

// Delegation shows the delegations the key's person gives or receives,
// and sets or removes one.
function Delegation() {
  const [list, setList] = useState(null);
  const [problem, setProblem] = useState(null);
  const [form, setForm] = useState({ delegate: '', starts: '', ends: '', move: false });
  const load = useCallback(async () => {
    try {
      setList((await api('approvals/getDelegations')).items);
    } catch (err) {
      setProblem(err);
    }
  }, []);
  useEffect(() => { load(); }, []);
  const set = async (ev) => {
    ev.preventDefault();
    setProblem(null);
    try {
      await api('approvals/setDelegation', { body: {
        delegate: form.delegate.trim(), starts_on: form.starts ? localMillis(form.starts) : Date.now(),
        ends_on: localMillis(form.ends), move_pending: form.move,
      } });
      setForm({ delegate: '', starts: '', ends: '', move: false });
      load();
    } catch (err) {
      setProblem(err);
    }
  };
  const remove = async (id) => {
    setProblem(null);
    try {
      await api('approvals/removeDelegation', { body: { delegation_id: id } });
      load();
    } catch (err) {
      setProblem(err);
    }
  };
  const now = Date.now();
  const active = (list || []).filter((d) => d.starts_on <= now && now < d.ends_on);
  return html`<section class="delegation" aria-labelledby="delegation-title">
    <h2 id="delegation-title">Delegation</h2>
    ${active.map((d) => html`<p class="active-delegation">Active: approvals of ${d.approver} go to ${d.delegate} until ${when(d.ends_on)}</p>`)}
    ${list && list.length > 0 && html`<ul>${list.map((d) => html`<li key=${d.delegation_id}>${d.approver} → ${d.delegate}, ${when(d.starts_on)} to ${when(d.ends_on)}
      <button type="button" onClick=${() => remove(d.delegation_id)}>Remove</button></li>`)}</ul>`}
    <details class="more">
      <summary>Away? Hand your approvals to someone</summary>
      <form onSubmit=${set}>
        <label for="d-delegate">Delegate (e-mail or UPN)</label>
        <input id="d-delegate" required value=${form.delegate} onInput=${(e) => setForm({ ...form, delegate: e.target.value })} />
        <label for="d-starts">From (empty: now)</label>
        <input id="d-starts" type="datetime-local" value=${form.starts} onInput=${(e) => setForm({ ...form, starts: e.target.value })} />
        <label for="d-ends">Until</label>
        <input id="d-ends" type="datetime-local" required value=${form.ends} onInput=${(e) => setForm({ ...form, ends: e.target.value })} />
        <label><input type="checkbox" checked=${form.move} onChange=${(e) => setForm({ ...form, move: e.target.checked })} /> Move my pending approvals too</label>
        <button type="submit">Set delegation</button>
      </form>
    </details>
    <${Problem} error=${problem} />
  </section>`;
}

// byDue orders approvals by due, those without one last, then by age.
export function byDue(a, b) {
  if (Boolean(a.due) !== Boolean(b.due)) return a.due ? -1 : 1;
  return (a.due || 0) - (b.due || 0) || a.created_on - b.created_on;
}

export function Inbox() {
  // The API lists newest first; the inbox reads the pages and shows those
  // due first, soonest (or most overdue) first, then the others oldest
  // first, as the one that has waited longest comes first. Beyond the
  // first batch, More reads older ones.
  const list = usePaged('approvals/getPendingApprovals', {}, []);
  const { error, reload } = list;
  const items = list.items && [...list.items].sort(byDue);
  const [done, setDone] = useState('');
  useEffect(() => {
    // Marks the first render of the list, which the browser test measures.
    if (items && performance.getEntriesByName('inbox-rendered').length === 0) performance.mark('inbox-rendered');
  }, [items]);
  const onDone = useCallback((msg) => { setDone(msg); reload(); }, []);
  return html`<h1>Approvals inbox</h1>
    <p class="hint">What waits on the person of this key (on anyone, for an admin key), by due, then oldest first.</p>
    <p aria-live="polite" class="done">${done}</p>
    <${Delegation} />
    <${Problem} error=${error} />
    ${!items && !error && html`<${Loading} />`}
    ${items && items.length === 0 && !list.lastKey && html`<p class="empty">Nothing waits for an answer.</p>`}
    <${More} list=${list} one="approval" many="approvals" label="More approvals, older than these" />
    <div class="cards">${(items || []).map((a) => html`<${ApprovalCard} key=${a.approval_id + a.revision} a=${a} onDone=${onDone} />`)}</div>`;
}
