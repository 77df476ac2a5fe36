// The console's only way to the data: the public REST API, event streams and the server's
// own endpoints, with the admin credential kept in sessionStorage (never localStorage).

const STORE = 'kindling.console.credential';
let credential = sessionStorage.getItem(STORE);
let namespace = new URLSearchParams(location.search).get('ns') || '';

export const isLoopback = ['localhost', '127.0.0.1', '[::1]'].includes(location.hostname);

export function setCredential(value, remember) {
  credential = value;
  if (remember) sessionStorage.setItem(STORE, value);
}

export function forgetCredential() {
  credential = null;
  sessionStorage.removeItem(STORE);
}

export function hasStoredCredential() { return sessionStorage.getItem(STORE) !== null; }

/**
 * True when the server wants a credential that a page opened by a link would not carry: any but
 * the emulator's `owner` (an admin secret is at least 16 bytes), which means emulator mode, where
 * the server's inspection pages are open.
 */
export function needsCredential() { return Boolean(credential) && credential !== 'owner'; }

export function currentNamespace() { return namespace; }
export function setNamespace(name) { namespace = name; }

/** The REST address of a path (an array of keys), with query parameters. */
export function dataURL(path, params = {}, absolute = false) {
  const encoded = path.map(encodeURIComponent).join('/');
  const search = new URLSearchParams();
  if (namespace) search.set('ns', namespace);
  for (const [name, value] of Object.entries(params)) search.set(name, value);
  const query = search.toString();
  const base = absolute ? location.origin : '';
  return `${base}/${encoded}.json${query ? '?' + query : ''}`;
}

function endpointURL(name, params = {}) {
  const search = new URLSearchParams(params);
  if (namespace) search.set('ns', namespace);
  const query = search.toString();
  return `/${name}${query ? '?' + query : ''}`;
}

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(url, { method = 'GET', body, raw = false } = {}) {
  const headers = {};
  if (credential) headers.Authorization = `Bearer ${credential}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, { method, headers, body, cache: 'no-store' });
  const text = await response.text();
  if (!response.ok) {
    let message = text || response.statusText;
    try { message = JSON.parse(text).error || message; } catch { /* not JSON */ }
    throw new APIError(response.status, message);
  }
  if (raw) return text;
  return text ? JSON.parse(text) : null;
}

export const get = (path, params) => request(dataURL(path, params));
export const put = (path, value) => request(dataURL(path), { method: 'PUT', body: JSON.stringify(value) });
export const push = (path, value) => request(dataURL(path), { method: 'POST', body: JSON.stringify(value) });
export const remove = (path) => request(dataURL(path), { method: 'DELETE' });
export const databases = () => request(endpointURL('.inspect/databases.json'));
export const rules = () => request(endpointURL('.settings/rules.json'), { raw: true });
export const saveRules = (text) => request(endpointURL('.settings/rules.json'), { method: 'PUT', body: text });
export const simulate = (input) => request(endpointURL('.settings/rules/simulate.json'), { method: 'POST', body: JSON.stringify(input) });
export const metrics = () => request('/.metrics', { raw: true });
export const coverageURL = () => endpointURL('.inspect/coverage');
export const coverage = () => request(endpointURL('.inspect/coverage.json'));
export const resetCoverage = () => request(endpointURL('.inspect/coverage.json'), { method: 'DELETE' });
export const coveragePage = () => request(endpointURL('.inspect/coverage'), { raw: true });

/** Probes whether the server answers admin endpoints with this credential (or none). */
export async function probe(candidate) {
  const headers = candidate ? { Authorization: `Bearer ${candidate}` } : {};
  const response = await fetch('/.inspect/databases.json', { headers, cache: 'no-store' });
  return response.ok;
}

/**
 * An event stream at a path. EventSource cannot set headers, so the credential travels as
 * `access_token=` (the same credential kind as the Bearer header). `onEvent(type, payload)` gets
 * put and patch events; `onError(message)` a cancellation or a lost stream.
 */
export function stream(path, params, onEvent, onError) {
  const all = { ...params };
  if (credential) all.access_token = credential;
  const source = new EventSource(dataURL(path, all));
  for (const type of ['put', 'patch']) {
    source.addEventListener(type, (event) => {
      try { onEvent(type, JSON.parse(event.data)); } catch (error) { onError(String(error)); }
    });
  }
  source.addEventListener('cancel', (event) => {
    let reason = event.data || 'permission denied';
    try { reason = JSON.parse(reason) ?? 'permission denied'; } catch { /* plain text */ }
    onError(`stream cancelled: ${reason}`);
    source.close();
  });
  source.addEventListener('auth_revoked', () => { onError('credential expired'); source.close(); });
  source.onerror = () => { if (source.readyState === EventSource.CLOSED) onError('stream closed'); };
  return source;
}

/** A short-lived status message at the bottom of the page. */
export function toast(message, kind = 'info') {
  const region = document.getElementById('toasts');
  const item = document.createElement('div');
  item.className = `toast ${kind}`;
  item.textContent = message;
  region.append(item);
  while (region.children.length > 3) region.firstElementChild.remove();
  setTimeout(() => item.remove(), kind === 'error' ? 6000 : 2500);
}
