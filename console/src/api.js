// The console's only way to the service: the public /v1 API, with the API
// key from session storage in the x-api-key header. The key never goes into
// a URL, so it reaches no access log, browser history or Referer header.

const KEY = 'cardflow.apiKey';

// The API sits beside /console/ (also under an API Gateway stage prefix).
const base = new URL('../v1/', location.href);

export const getKey = () => sessionStorage.getItem(KEY) || '';
export const setKey = (k) => sessionStorage.setItem(KEY, k);
export const clearKey = () => sessionStorage.removeItem(KEY);

// ApiError carries the service's error code and message.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onUnauthorized = () => {};
// whenUnauthorized sets what happens when the service refuses the key.
export const whenUnauthorized = (f) => { onUnauthorized = f; };

// api calls path (relative to /v1/) with query parameters and, for POST, a
// JSON body; it answers the parsed body or throws ApiError.
export async function api(path, { query, body, signal } = {}) {
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const init = { headers: { 'x-api-key': getKey() }, signal };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(url, init);
  let data = {};
  try {
    data = await resp.json();
  } catch {
    // an answer without a JSON body is reported by its status below
  }
  if (!resp.ok) {
    const err = new ApiError(resp.status, data.code || '', data.message || `the service answered ${resp.status}`);
    if (resp.status === 401) onUnauthorized(err);
    throw err;
  }
  return data;
}

// readPages reads a list from the page key after (null: from the top),
// following lastKey until it holds max items or the list ends. It answers
// the items and the lastKey to go on from, null at the end. Every field of
// a lastKey goes back as a query parameter of its name, beside the same
// filters, which is how each list of the API takes it.
export async function readPages(path, query = {}, after = null, max = 300) {
  const items = [];
  let next = after;
  do {
    const page = await api(path, { query: { ...query, ...(next || {}), limit: 30 } });
    items.push(...page.items);
    next = page.lastKey || null;
  } while (next && items.length < max);
  return { items, lastKey: next };
}

// pages reads a list from the top, up to max items.
export const pages = async (path, query = {}, max = 300) => (await readPages(path, query, null, max)).items;
