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

// pages reads every page of a list, up to max items, following lastKey.
export async function pages(path, query = {}, max = 300) {
  const items = [];
  let next = {};
  for (;;) {
    const page = await api(path, { query: { ...query, ...next, limit: 30 } });
    items.push(...page.items);
    if (!page.lastKey || items.length >= max) return items;
    next = page.lastKey;
  }
}
