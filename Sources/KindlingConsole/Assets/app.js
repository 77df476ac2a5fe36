// The console's shell: sign-in, the database switcher, the tabs and the data actions.
// Every change goes through the REST API, so the console can do nothing a client couldn't.

import * as api from './api.js';
import { Tree, pathText, isObject } from './tree.js';
import { Query } from './query.js';
import { Rules } from './rules.js';
import { Activity } from './activity.js';
import { HistoryPanel } from './history.js';

const $ = (id) => document.getElementById(id);

const tree = new Tree($('tree'), {
  onSelect: (node) => { $('selected-path').textContent = pathText(node.path); },
  onStatus: (count) => {
    $('live').textContent = count ? `● live · ${count} stream${count === 1 ? '' : 's'}` : '○ not live';
    $('live').classList.toggle('on', count > 0);
  },
  onEdit: (node) => editInline(node),
});
const query = new Query();
const rules = new Rules();
const activity = new Activity();
const historyPanel = new HistoryPanel({ pathText, ask: (options) => ask(options) });

/** A modal question. Resolves with the field's text (or true) on OK, null on cancel. */
function ask({ title, text = '', field = null, value = '', ok = 'OK', danger = false, check = null }) {
  const dialog = $('dialog');
  $('dialog-title').textContent = title;
  $('dialog-text').textContent = text;
  $('dialog-field-label').hidden = field === null;
  $('dialog-field-name').textContent = field ?? '';
  $('dialog-field').value = value;
  $('dialog-error').textContent = '';
  $('dialog-ok').textContent = ok;
  $('dialog-ok').className = danger ? 'danger' : 'primary';
  return new Promise((resolve) => {
    const submit = (event) => {
      if (event.submitter?.value !== 'ok') return;
      if (check) {
        const problem = check($('dialog-field').value);
        if (problem) { event.preventDefault(); $('dialog-error').textContent = problem; return; }
      }
    };
    $('dialog-form').addEventListener('submit', submit);
    dialog.addEventListener('close', () => {
      $('dialog-form').removeEventListener('submit', submit);
      resolve(dialog.returnValue === 'ok' ? (field === null ? true : $('dialog-field').value) : null);
    }, { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    // A destructive question starts on Cancel: Enter alone never deletes.
    (field !== null ? $('dialog-field') : danger ? $('dialog-cancel') : $('dialog-ok')).focus();
  });
}

/** JSON typed by a person: valid JSON keeps its type; anything else is a string. */
function parseTyped(text) {
  try { return JSON.parse(text); } catch (error) {
    // An object or array with a typo is a mistake, not a string to store.
    if (/^\s*[[{]/.test(text)) throw new Error(`Not JSON: ${error.message}`);
    return text;
  }
}

function jsonProblem(text) {
  try { JSON.parse(text); return null; } catch (error) { return `Not JSON: ${error.message}`; }
}

// --- Tabs -------------------------------------------------------------------------------------

const tabs = [...document.querySelectorAll('[role=tab]')];
function showTab(tab, focus = false) {
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute('aria-selected', String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
  if (tab.id === 'tab-rules') rules.open();
  if (tab.id === 'tab-activity') activity.start(); else activity.stop();
}
for (const tab of tabs) {
  tab.addEventListener('click', () => showTab(tab));
  tab.addEventListener('keydown', (event) => {
    const index = tabs.indexOf(tab);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    showTab(tabs[(next + tabs.length) % tabs.length], true);
  });
}

// --- Data actions -----------------------------------------------------------------------------

async function run(action, done) {
  try {
    await action();
    if (done) api.toast(done, 'ok');
  } catch (error) {
    api.toast(error.message, 'error');
  }
}

function editInline(node) {
  if (!node.parent) return;
  if (isObject(node.value)) return editJSON(node);
  const input = document.createElement('input');
  input.className = 'inline-edit';
  input.value = JSON.stringify(node.value);
  input.setAttribute('aria-label', `New value of ${pathText(node.path)} (JSON; text that is not JSON is saved as a string)`);
  node.valueEl.replaceWith(input);
  input.focus();
  input.select();
  let finished = false;
  const finish = async (save) => {
    if (finished) return;
    finished = true;
    input.replaceWith(node.valueEl);
    tree.select(node);
    if (!save) return;
    await run(() => api.put(node.path, parseTyped(input.value)), `Saved ${pathText(node.path)}`);
  };
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); finish(true); }
    if (event.key === 'Escape') { event.preventDefault(); finish(false); }
  });
  input.addEventListener('blur', () => finish(false));
}

async function editJSON(node) {
  let current;
  try { current = await api.get(node.path); } catch (error) { return api.toast(error.message, 'error'); }
  const text = await ask({
    title: `Edit ${pathText(node.path)}`, field: 'Value (JSON)', value: JSON.stringify(current, null, 2), ok: 'Save', check: jsonProblem,
  });
  if (text === null) return;
  await run(() => api.put(node.path, JSON.parse(text)), `Saved ${pathText(node.path)}`);
}

function showAdd() {
  const form = $('add-form');
  form.hidden = false;
  $('add-where').textContent = `Add under ${pathText(tree.selected.path)}`;
  $('add-key').value = '';
  $('add-value').value = '';
  $('add-key').focus();
}
function hideAdd() {
  $('add-form').hidden = true;
  tree.selected?.li.focus();
}
$('add-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const node = tree.selected;
  const key = $('add-key').value.trim();
  let value;
  try { value = parseTyped($('add-value').value); } catch (error) { api.toast(error.message, 'error'); $('add-value').focus(); return; }
  const path = node.path;
  // Closed before the write, not after it: a form opened again meanwhile (another add, under
  // another node) must not be closed when this write's answer comes.
  hideAdd();
  await run(async () => {
    if (key) await api.put([...path, ...key.split('/').filter(Boolean)], value);
    else await api.push(path, value);
    if (!node.open) await tree.expand(node);
  }, `Added under ${pathText(path)}`);
});
$('add-cancel').addEventListener('click', hideAdd);
$('add-form').addEventListener('keydown', (event) => { if (event.key === 'Escape') hideAdd(); });

async function deleteNode(node) {
  let count = 0;
  try {
    const shallow = await api.get(node.path, { shallow: 'true' });
    count = shallow && typeof shallow === 'object' ? Object.keys(shallow).length : 0;
  } catch (error) { return api.toast(error.message, 'error'); }
  const what = count ? `and its ${count.toLocaleString()} ${count === 1 ? 'child' : 'children'}` : '(a single value)';
  const confirmed = await ask({
    title: `Delete ${pathText(node.path)}?`, text: `This removes ${pathText(node.path)} ${what}. It cannot be undone.`, ok: 'Delete', danger: true,
  });
  if (!confirmed) return;
  const parent = node.parent ?? node;
  await run(() => api.remove(node.path), `Deleted ${pathText(node.path)}`);
  tree.select(parent);
}

async function exportNode(node) {
  await run(async () => {
    const value = await api.get(node.path);
    const blob = new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `${api.currentNamespace() || 'kindling'}${node.path.length ? '-' + node.path.join('-') : ''}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  });
}

$('import-file').addEventListener('change', async () => {
  const file = $('import-file').files[0];
  $('import-file').value = '';
  const node = tree.selected;
  if (!file || !node) return;
  let value;
  try { value = JSON.parse(await file.text()); } catch (error) { return api.toast(`${file.name} is not JSON: ${error.message}`, 'error'); }
  const confirmed = await ask({
    title: `Import into ${pathText(node.path)}?`, text: `${file.name} (${file.size.toLocaleString()} bytes) replaces everything at ${pathText(node.path)}.`, ok: 'Import', danger: true,
  });
  if (confirmed) await run(() => api.put(node.path, value), `Imported ${file.name}`);
});

const actions = {
  'act-edit': () => editInline(tree.selected),
  'act-add': showAdd,
  'act-delete': () => deleteNode(tree.selected),
  'act-import': () => $('import-file').click(),
  'act-export': () => exportNode(tree.selected),
  'act-query': () => { query.setPath(tree.selected.path); showTab($('tab-query'), true); },
  'act-history': () => historyPanel.open(tree.selected.path),
};
for (const [id, action] of Object.entries(actions)) $(id).addEventListener('click', () => tree.selected && action());

$('tree').addEventListener('keydown', (event) => {
  if (event.target.tagName === 'INPUT' || !tree.selected) return;
  if (event.key === 'Enter' || event.key === 'F2') { event.preventDefault(); editInline(tree.selected); }
  if (event.key === '+') { event.preventDefault(); showAdd(); }
  if (event.key === 'Delete') { event.preventDefault(); deleteNode(tree.selected); }
});

// --- Namespaces and start-up ------------------------------------------------------------------

async function loadNamespaces() {
  const select = $('namespace');
  let names = [];
  try { names = await api.databases(); } catch (error) { api.toast(`Databases: ${error.message}`, 'error'); }
  const current = api.currentNamespace();
  if (current && !names.includes(current)) names.push(current);
  select.replaceChildren(new Option('(default)', ''), ...names.sort().map((name) => new Option(name, name)));
  select.value = current;
}

$('namespace').addEventListener('change', async () => {
  api.setNamespace($('namespace').value);
  const url = new URL(location.href);
  if (api.currentNamespace()) url.searchParams.set('ns', api.currentNamespace()); else url.searchParams.delete('ns');
  history.replaceState(null, '', url);
  rules.reset();
  await tree.load();
});
$('namespace').addEventListener('focus', loadNamespaces);

$('sign-out').addEventListener('click', () => { api.forgetCredential(); location.reload(); });

async function signIn() {
  const dialog = $('login');
  return new Promise((resolve) => {
    $('login-form').addEventListener('submit', async (event) => {
      event.preventDefault();
      const secret = $('login-secret').value;
      if (await api.probe(secret)) {
        api.setCredential(secret, true);
        dialog.close();
        resolve();
      } else {
        $('login-error').textContent = 'That credential is not the admin’s.';
        $('login-secret').select();
      }
    });
    dialog.addEventListener('cancel', (event) => event.preventDefault());
    dialog.showModal();
  });
}

async function start() {
  // On loopback in emulator mode the server's admin endpoints answer without a credential and
  // `owner` is the admin: the console just opens. Anywhere else it asks, once per tab.
  if (api.hasStoredCredential()) {
    if (!(await api.probe(sessionStorage.getItem('kindling.console.credential')))) { api.forgetCredential(); await signIn(); }
  } else if (api.isLoopback && (await api.probe(null))) {
    api.setCredential('owner', false);
  } else {
    await signIn();
  }
  $('sign-out').hidden = !api.hasStoredCredential();
  await loadNamespaces();
  await tree.load();
  tree.root.li.focus();
  document.body.dataset.ready = 'true';
}

// A page kept in the back/forward cache would keep its streams open, and browsers allow only
// about six connections per host: close them when the page is hidden, reload when it is back.
addEventListener('pagehide', () => { tree.closeAll(tree.root); query.stop(); activity.stop(); });
addEventListener('pageshow', (event) => { if (event.persisted && tree.root) tree.load(); });

start();
