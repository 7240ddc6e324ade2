// The approvals inbox: what waits on the key's person, each with its card
// to answer, a reject with a comment, and reassignment.
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
    <p class="meta">${a.triggered_by ? `Requested by ${a.triggered_by} · ` : ''}Process ${a.process_id || '–'} · waiting since ${when(a.created_on)}${a.due ? ` · due ${when(a.due)}` : ''} · ${a.policy} of ${a.approvers.join(', ')}
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
    <${Problem} error=${error} />
    ${!items && !error && html`<${Loading} />`}
    ${items && items.length === 0 && !list.lastKey && html`<p class="empty">Nothing waits for an answer.</p>`}
    <${More} list=${list} one="approval" many="approvals" label="More approvals, older than these" />
    <div class="cards">${(items || []).map((a) => html`<${ApprovalCard} key=${a.approval_id + a.revision} a=${a} onDone=${onDone} />`)}</div>`;
}
