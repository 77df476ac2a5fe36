// The rules view: the namespace's security rules in an editor with line numbers (a load error
// is shown at its line), a simulator that runs one read or write as a chosen `auth`, and the
// rules coverage the server recorded (/.inspect/coverage.json): its totals, the expressions
// never evaluated or with one outcome (each selects its text in the editor), and the report.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);
const POSITION = /line (\d+), column (\d+)/;

export class Rules {
  constructor() {
    this.loaded = false;
    this.errorLine = null;
    const text = $('rules-text');
    text.addEventListener('input', () => this.gutter());
    text.addEventListener('scroll', () => { $('rules-gutter').scrollTop = text.scrollTop; });
    text.addEventListener('keydown', (event) => { // Tab keeps moving focus: the editor never traps it
      if ((event.ctrlKey || event.metaKey) && event.key === 's') { event.preventDefault(); this.save(); }
    });
    $('rules-save').addEventListener('click', () => this.save());
    $('rules-reload').addEventListener('click', () => this.load());
    $('sim-form').addEventListener('submit', (event) => { event.preventDefault(); this.simulate(); });
    $('rules-coverage-show').addEventListener('click', () => this.toggleCoverage());
    $('coverage-refresh').addEventListener('click', () => this.coverage());
    $('coverage-reset').addEventListener('click', () => this.coverage(true));
    $('coverage-download').addEventListener('click', () => this.downloadCoverage());
  }

  reset() {
    this.loaded = false;
    $('rules-coverage').hidden = true;
    $('rules-coverage-show').setAttribute('aria-expanded', 'false');
  }

  toggleCoverage() {
    const panel = $('rules-coverage');
    panel.hidden = !panel.hidden;
    $('rules-coverage-show').setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) this.coverage();
  }

  /** Shows the coverage recorded (after resetting it when `reset`). */
  async coverage(reset = false) {
    const summary = $('coverage-summary');
    const list = $('coverage-list');
    // A page opened from a link carries no credential: offered only where none is needed.
    const open = $('coverage-open');
    open.href = api.coverageURL();
    open.hidden = api.needsCredential();
    try {
      if (reset) await api.resetCoverage();
      const report = await api.coverage();
      const totals = report.summary;
      summary.textContent = `${totals.evaluated} of ${totals.expressions} expressions evaluated (${totals.percent}%), `
        + `${totals.outcomesSeen} of ${totals.outcomes} boolean outcomes seen (${totals.outcomePercent}%)`;
      const items = [];
      const visit = (node, rule, wholeEvaluated) => {
        if (node.count === 0 && wholeEvaluated) items.push(this.coverageItem(node, rule, 'miss', 'never evaluated'));
        if (node.count > 0 && node.boolean) {
          const seen = [true, false].filter((flag) => node.values.some((entry) => entry.value === flag));
          if (seen.length < 2) items.push(this.coverageItem(node, rule, 'part', seen.length ? `only ${seen[0]}` : 'errors only'));
        }
        for (const child of node.children ?? []) visit(child, rule, node.count > 0);
      };
      for (const root of report.rules) visit(root, root.rule, true);
      list.replaceChildren(...items);
    } catch (error) {
      summary.textContent = error.status === 401 ? 'Only the admin may read the rules coverage.' : error.message;
      list.replaceChildren();
    }
  }

  /** One expression to look at: its place (lines and columns from 1), rule and text. */
  coverageItem(node, rule, kind, what) {
    const [line, column] = node['location-start'].split(':').map(Number);
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = `${line + 1}:${column + 1} ${rule}`;
    button.title = 'Select it in the editor (the rules in force; unsaved edits may have moved it)';
    const [endLine, endColumn] = node['location-end'].split(':').map(Number);
    button.addEventListener('click', () => this.select(line, column, endLine, endColumn + 1));
    const text = document.createElement('span');
    text.className = kind;
    text.textContent = node.text;
    item.append(button, ' ', text, ` ${what}`);
    return item;
  }

  /** Selects the editor's text from one line and column to another (all from 0, end excluded). */
  select(line, column, endLine, endColumn) {
    const text = $('rules-text');
    const lines = text.value.split('\n');
    const offset = (row, col) => {
      let at = col;
      for (let index = 0; index < row && index < lines.length; index++) at += lines[index].length + 1;
      return at;
    };
    text.focus();
    text.setSelectionRange(offset(line, column), offset(endLine, endColumn));
  }

  /** Saves the HTML report (fetched with the credential, which a plain link would not carry). */
  async downloadCoverage() {
    try {
      const page = await api.coveragePage();
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([page], { type: 'text/html' }));
      link.download = `rules-coverage-${api.currentNamespace() || 'default'}.html`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    } catch (error) {
      api.toast(error.message, 'error');
    }
  }

  open() { if (!this.loaded) this.load(); }

  async load() {
    try {
      $('rules-text').value = await api.rules();
      this.loaded = true;
      this.showError(null);
    } catch (error) {
      this.showError(error.status === 401 ? 'Only the admin may read the rules.' : error.message);
    }
    this.gutter();
  }

  async save() {
    try {
      await api.saveRules($('rules-text').value);
      this.showError(null);
      api.toast('Rules saved and in force', 'ok');
    } catch (error) {
      this.showError(error.message);
    }
  }

  /** Shows a load error and marks its line (and puts the caret there); null clears it. */
  showError(message) {
    const banner = $('rules-error');
    banner.hidden = !message;
    banner.textContent = message ?? '';
    const match = message && POSITION.exec(message);
    this.errorLine = match ? Number(match[1]) : null;
    this.gutter();
    if (match) {
      const text = $('rules-text');
      const lines = text.value.split('\n');
      let offset = 0;
      for (let index = 0; index < this.errorLine - 1 && index < lines.length; index++) offset += lines[index].length + 1;
      offset += Math.max(0, Number(match[2]) - 1);
      text.focus();
      text.setSelectionRange(offset, offset);
      const lineHeight = parseFloat(getComputedStyle(text).lineHeight) || 18;
      text.scrollTop = Math.max(0, (this.errorLine - 4) * lineHeight);
    }
  }

  gutter() {
    const count = $('rules-text').value.split('\n').length;
    const gutter = $('rules-gutter');
    const lines = [];
    for (let line = 1; line <= count; line++) {
      const span = document.createElement('span');
      span.textContent = String(line);
      if (line === this.errorLine) span.className = 'bad';
      lines.push(span);
    }
    gutter.replaceChildren(...lines);
    gutter.scrollTop = $('rules-text').scrollTop;
  }

  async simulate() {
    const out = $('sim-result');
    const op = new FormData($('sim-form')).get('sim-op');
    let auth, data;
    try {
      auth = JSON.parse($('sim-auth').value || 'null');
      data = op === 'write' ? JSON.parse($('sim-data').value || 'null') : undefined;
    } catch (error) {
      out.replaceChildren(line(`Not JSON: ${error.message}`, 'denied'));
      return;
    }
    const input = { path: $('sim-path').value || '/', op, auth };
    if (op === 'write') input.data = data;
    if ($('sim-draft').checked) input.rules = $('rules-text').value;
    try {
      const { allowed, explanation } = await api.simulate(input);
      const verdict = line(`${op} ${input.path}: ${allowed ? 'ALLOWED' : 'DENIED'}`, allowed ? 'allowed' : 'denied');
      verdict.classList.add('verdict');
      const trace = document.createElement('ol');
      trace.className = 'trace';
      explanation.forEach((text, index) => {
        const item = document.createElement('li');
        item.textContent = text;
        // The rule that decided is the last one evaluated before the closing reason.
        if (index === explanation.length - 2 || explanation.length === 1) item.className = 'decider';
        trace.append(item);
      });
      out.replaceChildren(verdict, trace);
    } catch (error) {
      out.replaceChildren(line(error.message, 'denied'));
      if (POSITION.test(error.message)) this.showError(error.message);
    }
  }
}

function line(text, kind) {
  const element = document.createElement('p');
  element.className = kind;
  element.textContent = text;
  return element;
}
