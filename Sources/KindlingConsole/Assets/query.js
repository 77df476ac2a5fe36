// The query panel: orderBy, ranges and limits run live as an event stream, with the REST URL
// and the JavaScript SDK code for the same query to copy.

import * as api from './api.js';
import { compareKeys, compareValues, describe, setAt, pathText } from './tree.js';

const $ = (id) => document.getElementById(id);
const RANGES = ['startAt', 'startAfter', 'endAt', 'endBefore', 'equalTo'];

function splitPath(text) { return text.split('/').filter(Boolean); }

export class Query {
  constructor() {
    this.source = null;
    this.result = null;
    this.shown = null;
    $('q-order').addEventListener('change', () => {
      $('q-child').disabled = $('q-order').value !== 'child';
      if (!$('q-child').disabled) $('q-child').focus();
      this.showCode();
    });
    $('query-form').addEventListener('input', () => this.showCode());
    $('query-form').addEventListener('submit', (event) => { event.preventDefault(); this.run(); });
    $('q-stop').addEventListener('click', () => this.stop());
    $('copy-rest').addEventListener('click', () => copy($('q-rest').textContent));
    $('copy-sdk').addEventListener('click', () => copy($('q-sdk').textContent));
    this.showCode();
  }

  setPath(path) {
    $('q-path').value = pathText(path);
    this.showCode();
  }

  /** The query as read from the form: {path, orderBy, child, ranges: [[name, value]], first, last}. */
  read() {
    const order = $('q-order').value;
    const child = $('q-child').value.trim();
    const spec = { path: splitPath($('q-path').value), orderBy: order === 'child' ? child : order, child: order === 'child', ranges: [], first: null, last: null };
    for (const name of RANGES) {
      const text = $(`q-${name}`).value.trim();
      if (!text) continue;
      let value;
      try { value = JSON.parse(text); } catch { value = text; }
      spec.ranges.push([name, value]);
    }
    for (const [name, id] of [['first', 'q-first'], ['last', 'q-last']]) {
      const number = Number($(id).value);
      if ($(id).value && Number.isInteger(number) && number > 0) spec[name] = number;
    }
    return spec;
  }

  params(spec) {
    const params = { orderBy: JSON.stringify(spec.orderBy) };
    for (const [name, value] of spec.ranges) params[name] = JSON.stringify(value);
    if (spec.first) params.limitToFirst = String(spec.first);
    if (spec.last) params.limitToLast = String(spec.last);
    return params;
  }

  showCode() {
    const spec = this.read();
    $('q-rest').textContent = `curl '${api.dataURL(spec.path, this.params(spec), true)}'`;
    const constraints = [];
    if (spec.child) constraints.push(`orderByChild(${JSON.stringify(spec.orderBy)})`);
    else constraints.push({ $key: 'orderByKey()', $value: 'orderByValue()', $priority: 'orderByPriority()' }[spec.orderBy]);
    for (const [name, value] of spec.ranges) constraints.push(`${name}(${JSON.stringify(value)})`);
    if (spec.first) constraints.push(`limitToFirst(${spec.first})`);
    if (spec.last) constraints.push(`limitToLast(${spec.last})`);
    const imports = ['getDatabase', 'ref', 'query', 'onValue', ...constraints.map((text) => text.slice(0, text.indexOf('(')))];
    $('q-sdk').textContent = [
      `import { ${[...new Set(imports)].join(', ')} } from 'firebase/database';`,
      '',
      'const db = getDatabase();',
      `const q = query(ref(db, ${JSON.stringify(pathText(spec.path))}),`,
      `  ${constraints.join(',\n  ')});`,
      'onValue(q, (snapshot) => {',
      '  snapshot.forEach((child) => { console.log(child.key, child.val()); });',
      '});',
    ].join('\n');
  }

  async run() {
    this.stop();
    const spec = this.read();
    this.spec = spec;
    this.result = null;
    this.shown = null;
    $('q-result').replaceChildren();
    $('q-count').textContent = 'running…';
    // One plain read first: an event stream cannot say why the server refused a query.
    try {
      await api.get(spec.path, { ...this.params(spec), print: 'silent' });
    } catch (error) {
      $('q-count').textContent = `· ${error.message}`;
      $('q-count').className = 'error';
      return;
    }
    $('q-count').className = 'muted';
    this.source = api.stream(spec.path, this.params(spec), (type, { path, data }) => {
      const keys = path.split('/').filter(Boolean);
      if (type === 'put') this.result = keys.length ? setAt(this.result, keys, data) : data;
      else for (const [relative, value] of Object.entries(data)) this.result = setAt(this.result, [...keys, ...splitPath(relative)], value);
      this.render();
    }, (message) => {
      $('q-count').textContent = typeof message === 'string' ? message : 'stopped';
      this.source = null;
    });
  }

  stop() {
    this.source?.close();
    this.source = null;
  }

  /** The children in the query's order (JSON objects lose it: it is computed again here). */
  ordered() {
    const result = this.result;
    if (result === null || typeof result !== 'object') return [];
    const entries = Object.entries(result);
    const spec = this.spec;
    const sortValue = (value) => {
      if (spec.orderBy === '$value') return value;
      if (!spec.child) return null;
      let current = value;
      for (const key of splitPath(spec.orderBy)) current = current !== null && typeof current === 'object' ? current[key] ?? null : null;
      return current;
    };
    if (spec.orderBy === '$key' || spec.orderBy === '$priority') return entries.sort(([a], [b]) => compareKeys(a, b));
    return entries.sort(([a, x], [b, y]) => compareValues(sortValue(x), sortValue(y)) || compareKeys(a, b));
  }

  render() {
    const list = $('q-result');
    const entries = this.ordered();
    if (this.result !== null && typeof this.result !== 'object') {
      const { text, type } = describe(this.result);
      list.replaceChildren(item('(value)', text, type));
    } else {
      // After the first answer, what the stream added or changed flashes as in the tree.
      const before = this.shown;
      this.shown = new Map();
      list.replaceChildren(...entries.map(([key, value]) => {
        const text = value !== null && typeof value === 'object' ? JSON.stringify(value) : describe(value).text;
        const element = item(key, text.length > 200 ? text.slice(0, 200) + '…' : text, describe(value).type);
        if (before && !before.has(key)) element.className = 'flash-added';
        else if (before && before.get(key) !== text) element.className = 'flash-changed';
        this.shown.set(key, text);
        return element;
      }));
    }
    $('q-count').textContent = `· ${entries.length} ${entries.length === 1 ? 'child' : 'children'} · live`;
  }
}

function item(key, text, type) {
  const li = document.createElement('li');
  const k = document.createElement('span');
  k.className = 'key';
  k.textContent = key;
  const v = document.createElement('span');
  v.className = `value t-${type}`;
  v.textContent = text;
  li.append(k, v);
  return li;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    api.toast('Copied', 'ok');
  } catch {
    api.toast('Copying is not allowed here: select the text instead', 'error');
  }
}
