// The live data tree: each opened node loads one page of keys with `shallow=true`, then an
// event stream (a `$key` query over the same page) keeps it current. Children of a live node
// are kept current by their parent's stream; a paged node gets a stream of its own.

import * as api from './api.js';

export const PAGE = 100;
/** A child known to be an object whose contents are not loaded yet (shallow `true`). */
const OBJECT = Symbol('object');
/** Browsers allow about six connections per host over HTTP/1.1: keep two for requests. */
const MAX_STREAMS = 4;

const INT_KEY = /^-?(0|[1-9]\d{0,9})$/;
function intKey(key) {
  if (!INT_KEY.test(key)) return null;
  const value = Number(key);
  return value >= -2147483648 && value <= 2147483647 ? value : null;
}

/** Firebase key order: 32-bit integer keys numerically first, then the rest by UTF-16 units. */
export function compareKeys(a, b) {
  if (a === b) return 0;
  const x = intKey(a), y = intKey(b);
  if (x !== null && y !== null) return x - y;
  if (x !== null) return -1;
  if (y !== null) return 1;
  return a < b ? -1 : 1;
}

function rank(value) {
  if (value === null || value === undefined) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return 5;
}

/** Firebase value order: null, false, true, numbers, strings (UTF-16), then objects. */
export function compareValues(a, b) {
  const r = rank(a) - rank(b);
  if (r !== 0) return r;
  if (typeof a === 'number') return a - b;
  if (typeof a === 'string') return a === b ? 0 : a < b ? -1 : 1;
  return 0;
}

export function isObject(value) { return value === OBJECT || (value !== null && typeof value === 'object'); }

/** The text and type class shown for a value. */
export function describe(value) {
  if (value === OBJECT) return { text: '{…}', type: 'object' };
  if (value === null || value === undefined) return { text: 'null', type: 'null' };
  if (typeof value === 'object') {
    const count = Object.keys(value).length;
    return { text: `{${count.toLocaleString('en')} ${count === 1 ? 'child' : 'children'}}`, type: 'object' };
  }
  return { text: JSON.stringify(value), type: typeof value };
}

/** `root` with `value` at `keys` (null removes, and empties collapse to null). */
export function setAt(root, keys, value) {
  if (keys.length === 0) return value;
  const [first, ...rest] = keys;
  const base = root !== null && typeof root === 'object' ? { ...root } : {};
  const child = setAt(base[first] ?? null, rest, value);
  if (child === null) delete base[first]; else base[first] = child;
  return Object.keys(base).length ? base : null;
}

export function pathText(path) { return '/' + path.join('/'); }

class TreeNode {
  constructor(tree, parent, key, value) {
    this.tree = tree;
    this.parent = parent;
    this.key = key;
    this.path = parent ? [...parent.path, key] : [];
    this.value = value;
    this.open = false;
    this.children = new Map();
    this.window = null;
    this.page = { start: undefined, inclusive: false, history: [], hasMore: false };
    this.source = null;
    this.live = false;
    this.render();
  }

  get level() { return this.path.length + 1; }
  get expandable() { return isObject(this.value) || !this.parent; }
  get paged() { return this.page.hasMore || this.page.start !== undefined; }

  render() {
    const li = document.createElement('li');
    this.li = li;
    li.setAttribute('role', 'treeitem');
    li.setAttribute('aria-level', String(this.level));
    li.tabIndex = -1;
    li.node = this;
    const row = document.createElement('div');
    row.className = 'row';
    row.style.setProperty('--depth', String(this.path.length));
    this.twisty = document.createElement('span');
    this.twisty.className = 'twisty';
    this.twisty.setAttribute('aria-hidden', 'true');
    const key = document.createElement('span');
    key.className = 'key';
    key.textContent = this.parent ? this.key : (api.currentNamespace() || 'default database');
    this.valueEl = document.createElement('span');
    this.valueEl.className = 'value';
    this.metaEl = document.createElement('span');
    this.metaEl.className = 'meta';
    row.append(this.twisty, key, this.valueEl, this.metaEl);
    li.append(row);
    this.row = row;
    this.updateValue();
  }

  updateValue() {
    const { text, type } = this.parent ? describe(this.value) : { text: '', type: 'object' };
    this.valueEl.textContent = text;
    this.valueEl.className = `value t-${type}`;
    if (this.expandable) this.li.setAttribute('aria-expanded', String(this.open));
    else this.li.removeAttribute('aria-expanded');
    this.li.setAttribute('aria-label', `${this.parent ? this.key : 'root'}${text ? ': ' + text : ''}`);
  }

  flash(kind) {
    this.row.classList.remove('flash-added', 'flash-changed', 'flash-removed');
    void this.row.offsetWidth; // restart the animation
    this.row.classList.add(`flash-${kind}`);
  }
}

export class Tree {
  constructor(element, { onSelect, onStatus, onEdit }) {
    this.element = element;
    this.onSelect = onSelect;
    this.onEdit = onEdit;
    this.onStatus = onStatus;
    this.root = null;
    this.selected = null;
    element.addEventListener('click', (event) => this.click(event));
    element.addEventListener('keydown', (event) => this.keydown(event));
    element.addEventListener('animationend', (event) => {
      if (!event.target.classList.contains('flash-removed')) event.target.classList.remove('flash-added', 'flash-changed');
    });
  }

  /** Shows the namespace from its root, closing every stream of the one before. */
  async load() {
    if (this.root) this.closeAll(this.root);
    this.element.replaceChildren();
    this.root = new TreeNode(this, null, '', OBJECT);
    this.element.append(this.root.li);
    this.select(this.root, false);
    await this.expand(this.root);
  }

  closeAll(node) {
    for (const child of node.children.values()) this.closeAll(child);
    this.stopStream(node);
  }

  streams() {
    const open = [];
    const visit = (node) => { if (node.source) open.push(node); node.children.forEach(visit); };
    if (this.root) visit(this.root);
    return open;
  }

  async expand(node) {
    if (!node.expandable) return;
    node.open = true;
    node.updateValue();
    await this.loadPage(node, undefined);
  }

  collapse(node) {
    node.open = false;
    for (const child of node.children.values()) this.closeAll(child);
    this.stopStream(node);
    node.children.clear();
    node.group?.remove();
    node.group = null;
    node.pager = null;
    node.live = false;
    node.page = { start: undefined, inclusive: false, history: [], hasMore: false };
    node.updateValue();
  }

  /** Loads one page of keys (shallow, by key) and makes the node live. */
  async loadPage(node, start, inclusive = false) {
    const started = performance.now();
    const params = { shallow: 'true', orderBy: '"$key"', limitToFirst: String(PAGE + 1) };
    if (start !== undefined) params[inclusive ? 'startAt' : 'startAfter'] = JSON.stringify(start);
    node.metaEl.textContent = 'loading…';
    let shallow;
    try {
      shallow = await api.get(node.path, params);
    } catch (error) {
      node.metaEl.textContent = error.message;
      node.metaEl.classList.add('error');
      return;
    }
    node.metaEl.classList.remove('error');
    if (!node.open) return;
    if (shallow === null || typeof shallow !== 'object') {
      if (node.parent) { // not an object (any more): a leaf
        node.open = false;
        node.value = shallow;
        node.metaEl.textContent = '';
        node.updateValue();
        return;
      }
      shallow = {};
    }
    const keys = Object.keys(shallow).sort(compareKeys);
    node.page.hasMore = keys.length > PAGE;
    node.page.start = start;
    node.page.inclusive = inclusive;
    const window = {};
    const known = node.value !== OBJECT && node.value && typeof node.value === 'object' ? node.value : {};
    for (const key of keys.slice(0, PAGE)) window[key] = key in known ? known[key] : shallow[key] === true ? OBJECT : shallow[key];
    for (const child of node.children.values()) this.closeAll(child);
    node.children.clear();
    node.group?.remove();
    node.pager = null;
    node.group = document.createElement('ul');
    node.group.setAttribute('role', 'group');
    node.li.append(node.group);
    node.window = null;
    this.showWindow(node, window, false);
    this.renderPager(node);
    node.loadMs = performance.now() - started;
    node.li.dataset.loadMs = node.loadMs.toFixed(1);
    if (node.paged) node.metaEl.textContent = `keys “${keys[0] ?? ''}” to “${keys[Math.min(keys.length, PAGE) - 1] ?? ''}”`;
    else if (node.parent) node.metaEl.textContent = '';
    const covered = node.parent && node.parent.live && !node.paged;
    if (covered) node.live = true; else this.startStream(node);
  }

  startStream(node) {
    this.stopStream(node);
    const params = { orderBy: '"$key"', limitToFirst: String(PAGE) };
    if (node.page.start !== undefined) params[node.page.inclusive ? 'startAt' : 'startAfter'] = JSON.stringify(node.page.start);
    let initial = true;
    node.source = api.stream(node.path, params, (type, { path, data }) => {
      const keys = path.split('/').filter(Boolean);
      let window = node.window ?? {};
      if (type === 'put') {
        window = keys.length === 0 ? data : setAt(window, keys, data);
      } else {
        for (const [relative, value] of Object.entries(data)) window = setAt(window, [...keys, ...relative.split('/').filter(Boolean)], value);
      }
      if (window === null || typeof window !== 'object') window = {};
      this.showWindow(node, window, !initial);
      initial = false;
    }, (message) => {
      node.metaEl.textContent = typeof message === 'string' ? message : 'stream ended';
      node.live = false;
      node.source = null;
      this.status();
    });
    node.live = true;
    const open = this.streams();
    if (open.length > MAX_STREAMS) { // the oldest stream pauses; its node says so
      const oldest = open.filter((other) => other !== node && other !== this.root)[0] ?? open[0];
      this.stopStream(oldest);
      oldest.metaEl.textContent = 'paused: too many open streams (collapse and reopen to resume)';
    }
    this.status();
  }

  stopStream(node) {
    if (!node.source) return;
    node.source.close();
    node.source = null;
    node.live = false;
    this.status();
  }

  status() { this.onStatus?.(this.streams().length); }

  /** Shows `window` (key → value) as the node's children, flashing what changed when asked. */
  showWindow(node, window, flash) {
    const previous = node.window ?? {};
    node.window = window;
    if (node.parent && !node.paged) {
      node.value = window;
      node.updateValue();
    }
    const keys = Object.keys(window).sort(compareKeys);
    if (!node.parent && !node.paged) node.metaEl.textContent = keys.length ? '' : 'No data yet: press + or “Add child” to add some';
    for (const [key, child] of node.children) {
      if (key in window) continue;
      node.children.delete(key);
      this.closeAll(child);
      if (flash) {
        child.flash('removed');
        child.li.classList.add('leaving');
        setTimeout(() => child.li.remove(), 900);
      } else child.li.remove();
      if (this.selected === child) this.select(node, false);
    }
    let before = null;
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index];
      const value = window[key];
      let child = node.children.get(key);
      if (!child) {
        child = new TreeNode(this, node, key, value);
        node.children.set(key, child);
        node.group.insertBefore(child.li, before ?? node.pager ?? null);
        if (flash) child.flash('added');
      } else if (!(key in previous) || !same(previous[key], value)) {
        const wasObject = isObject(child.value);
        if (!(value === OBJECT && wasObject)) child.value = value;
        child.updateValue();
        if (flash && key in previous) child.flash('changed');
        if (child.open && !isObject(value)) this.collapse(child);
        else if (child.open && child.live && !child.source && !child.paged && value !== OBJECT) this.showWindow(child, value ?? {}, flash);
        if (!wasObject && isObject(value) && child.open === false) child.updateValue();
      }
      before = child.li;
    }
  }

  renderPager(node) {
    node.pager?.remove();
    node.pager = null;
    if (!node.paged) return;
    const li = document.createElement('li');
    li.className = 'pager';
    li.setAttribute('role', 'none');
    li.style.setProperty('--depth', String(node.path.length + 1));
    const turn = async (start, inclusive = false) => {
      await this.loadPage(node, start, inclusive);
      node.li.scrollIntoView({ block: 'start' });
      node.pager?.querySelector(':enabled')?.focus({ preventScroll: true });
    };
    const previous = button('‹ Previous page', () => {
      const [start, inclusive] = node.page.history.pop();
      turn(start, inclusive);
    });
    previous.disabled = node.page.history.length === 0;
    const next = button('Next page ›', () => {
      const keys = Object.keys(node.window).sort(compareKeys);
      node.page.history.push([node.page.start, node.page.inclusive]);
      turn(keys[keys.length - 1]);
    });
    next.disabled = !node.page.hasMore;
    const label = document.createElement('span');
    label.className = 'muted';
    label.textContent = `${PAGE} per page, by key`;
    const jump = document.createElement('input');
    jump.placeholder = 'Go to key…';
    jump.setAttribute('aria-label', `Go to a key under ${pathText(node.path)}`);
    jump.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' || !jump.value) return;
      event.preventDefault();
      node.page.history.push([node.page.start, node.page.inclusive]);
      turn(jump.value, true);
    });
    li.append(previous, next, jump, label);
    node.group.append(li);
    node.pager = li;
  }

  // Selection and keyboard: one row is tabbable (roving tabindex); arrows move, as in a file tree.

  select(node, focus = true) {
    if (this.selected) {
      this.selected.li.tabIndex = -1;
      this.selected.li.removeAttribute('aria-selected');
    }
    this.selected = node;
    node.li.tabIndex = 0;
    node.li.setAttribute('aria-selected', 'true');
    if (focus) node.li.focus({ preventScroll: false });
    this.onSelect?.(node);
  }

  visible() {
    const rows = [];
    const visit = (node) => {
      rows.push(node);
      if (node.open) for (const key of [...node.children.keys()].sort(compareKeys)) visit(node.children.get(key));
    };
    if (this.root) visit(this.root);
    return rows;
  }

  click(event) {
    if (event.target.closest('.pager')) return;
    const li = event.target.closest('li[role=treeitem]');
    if (!li) return;
    const node = li.node;
    this.select(node);
    if (event.target.classList.contains('twisty') || (event.detail === 2 && node.expandable)) this.toggle(node);
    else if (event.detail === 2) this.onEdit?.(node); // a double-clicked value is edited in place
  }

  toggle(node) {
    if (!node.expandable) return;
    if (node.open) this.collapse(node); else this.expand(node);
  }

  keydown(event) {
    if (event.target.closest('.pager') || event.target.tagName === 'INPUT') return;
    const node = this.selected;
    if (!node) return;
    const rows = this.visible();
    const index = rows.indexOf(node);
    let handled = true;
    switch (event.key) {
      case 'ArrowDown': if (rows[index + 1]) this.select(rows[index + 1]); break;
      case 'ArrowUp': if (index > 0) this.select(rows[index - 1]); break;
      case 'Home': this.select(rows[0]); break;
      case 'End': this.select(rows[rows.length - 1]); break;
      case 'ArrowRight':
        if (node.expandable && !node.open) this.expand(node);
        else if (node.open && rows[index + 1]?.parent === node) this.select(rows[index + 1]);
        break;
      case 'ArrowLeft':
        if (node.open && node.parent) this.collapse(node);
        else if (node.parent) this.select(node.parent);
        break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  }

  /** The node at a path if it is shown. */
  find(path) {
    let node = this.root;
    for (const key of path) {
      node = node?.children.get(key);
      if (!node) return null;
    }
    return node;
  }
}

function same(a, b) {
  if (a === b) return true;
  if (a === OBJECT || b === OBJECT) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

export function button(text, action, className = '') {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = text;
  if (className) element.className = className;
  element.addEventListener('click', action);
  return element;
}
