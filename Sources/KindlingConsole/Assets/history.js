// A node's past: the writes that changed it (from the server's history), a slider over them that
// shows the node as it was after each, and a restore of the version shown as one ordinary write.
// Reads of the past are admin reads (`at=`, `changes=true`), so the console needs its credential.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);

export class HistoryPanel {
  constructor({ pathText, ask }) {
    this.pathText = pathText;
    this.ask = ask;
    this.path = null;
    this.changes = [];
    this.shown = null;
    $('history-slider').addEventListener('input', () => this.showVersion(Number($('history-slider').value)));
    $('history-close').addEventListener('click', () => this.close());
    $('history-restore').addEventListener('click', () => this.restore());
  }

  /** Opens the panel on `path` (an array of keys) and lists its changes, newest last. */
  async open(path) {
    this.path = path;
    $('history').hidden = false;
    $('history-where').textContent = this.pathText(path);
    $('history-status').textContent = 'Loading the history…';
    $('history-value').textContent = '';
    $('history-slider').disabled = true;
    $('history-restore').disabled = true;
    try {
      this.changes = await api.get(path, { changes: 'true', limit: '500' });
    } catch (error) {
      $('history-status').textContent = error.message;
      return;
    }
    if (!this.changes.length) {
      $('history-status').textContent = 'No writes to this node in the kept history.';
      return;
    }
    const slider = $('history-slider');
    slider.min = '0';
    slider.max = String(this.changes.length - 1);
    slider.value = slider.max;
    slider.disabled = false;
    await this.showVersion(this.changes.length - 1);
  }

  close() {
    $('history').hidden = true;
    this.path = null;
  }

  /** Shows the node as it was just after change `index`. */
  async showVersion(index) {
    const change = this.changes[index];
    if (!change) return;
    const latest = index === this.changes.length - 1;
    const who = change.writer === undefined ? '' : change.writer === null ? ' by an unauthenticated client'
      : change.writer.admin ? ' by admin' : ` by ${change.writer.uid}`;
    $('history-status').textContent =
      `${new Date(change.time).toLocaleString()} · #${change.sequence} ${change.kind} ${change.path}${who}` +
      ` · ${index + 1} of ${this.changes.length}${latest ? ' (latest)' : ''}`;
    const token = (this.shown = {});
    try {
      const value = await api.get(this.path, { at: String(change.time), format: 'export' });
      if (this.shown !== token) return;
      this.version = { time: change.time, value };
      $('history-value').textContent = JSON.stringify(value, null, 2) ?? 'null';
      $('history-restore').disabled = false;
    } catch (error) {
      if (this.shown === token) $('history-value').textContent = error.message;
    }
  }

  /** Writes the version shown back at the node, after asking. It is itself a change in the
   *  history, so restoring the version before it undoes it. */
  async restore() {
    if (!this.version || !this.path) return;
    const { time, value } = this.version;
    const confirmed = await this.ask({
      title: `Restore ${this.pathText(this.path)}?`,
      text: `The data at ${this.pathText(this.path)} becomes what it was at ${new Date(time).toLocaleString()}. The restore is one write, kept in the history like any other.`,
      ok: 'Restore', danger: true,
    });
    if (!confirmed) return;
    try {
      await api.put(this.path, value);
      api.toast(`Restored ${this.pathText(this.path)} to ${new Date(time).toLocaleString()}`);
      await this.open(this.path);
    } catch (error) {
      api.toast(error.message, 'error');
    }
  }
}
