// The rules view: the namespace's security rules in an editor with line numbers (a load error
// is shown at its line), and a simulator that runs one read or write as a chosen `auth`.

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
  }

  reset() { this.loaded = false; }

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
