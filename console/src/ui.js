// Pieces every page uses: formatting, list loading, and the small
// components for problems, loading and statuses.
import { useEffect, useRef, useState } from 'preact/hooks';
import { readPages } from './api.js';
import { html } from './html.js';

export const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
export const STATUSES = ['RUNNING', 'WAITING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

export const when = (ms) => (ms ? new Date(ms).toLocaleString() : '');
export const short = (v) => {
  const s = JSON.stringify(v);
  return s && s.length > 160 ? s.slice(0, 157) + '…' : s;
};

// useLoad runs load on mount and when deps change; it answers
// [data, error, reload].
export function useLoad(load, deps) {
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
export function usePaged(path, query, deps, max = 300) {
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
export function More({ list, one, many, label }) {
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

export const Problem = ({ error }) => error && html`<p class="problem" role="alert">${error.message}</p>`;
export const Loading = () => html`<p class="loading" aria-live="polite">Loading…</p>`;
export const Badge = ({ status }) => html`<span class=${'badge s-' + String(status).toLowerCase()}>${status}</span>`;

export function groupVersions(items, idKey, versionKey) {
  const groups = new Map();
  for (const it of items) {
    if (!groups.has(it[idKey])) groups.set(it[idKey], []);
    groups.get(it[idKey]).push(it);
  }
  for (const list of groups.values()) list.sort((a, b) => b[versionKey] - a[versionKey]);
  return [...groups.values()];
}

export function versionOf(statusVersion) {
  return Number(String(statusVersion).split(/[_-]/).pop());
}
