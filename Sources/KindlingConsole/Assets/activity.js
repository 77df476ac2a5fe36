// Activity: connections, listens and writes per second, read from `/.metrics` (Prometheus text)
// once a second while the tab is shown, as three small live charts.

import * as api from './api.js';

const $ = (id) => document.getElementById(id);
const POINTS = 120;

/** Sums every sample of a metric (all label sets) in Prometheus text; null when absent. */
export function sample(text, name) {
  let total = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const value = Number(rest.slice(rest.lastIndexOf(rest.includes('}') ? '}' : ' ') + 1).trim().split(' ')[0]);
    if (Number.isFinite(value)) total = (total ?? 0) + value;
  }
  return total;
}

export class Activity {
  constructor() {
    this.timer = null;
    this.series = { connections: [], listens: [], writes: [] };
    this.lastWrites = null;
  }

  start() {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }

  async tick() {
    let text;
    try {
      text = await api.metrics();
    } catch (error) {
      // No endpoint (an older server) or no access: say so once, and stop asking every second.
      $('metrics-status').textContent = error.status === 404 ? 'Metrics unavailable: this server has no /.metrics endpoint.' : `Metrics unavailable: ${error.message}`;
      for (const id of ['m-connections', 'm-listens', 'm-writes']) $(id).textContent = '–';
      this.stop();
      return;
    }
    $('metrics-status').textContent = 'From /.metrics, every second.';
    const now = performance.now();
    const writes = sample(text, 'kindling_writes_committed_total');
    let rate = null;
    if (writes !== null && this.lastWrites) rate = Math.max(0, (writes - this.lastWrites.value) / ((now - this.lastWrites.at) / 1000));
    if (writes !== null) this.lastWrites = { value: writes, at: now };
    const values = {
      connections: sample(text, 'kindling_connections_open'),
      listens: sample(text, 'kindling_listens_active'),
      writes: rate,
    };
    for (const [name, value] of Object.entries(values)) {
      const series = this.series[name];
      series.push(value);
      if (series.length > POINTS) series.shift();
      $(`m-${name}`).textContent = value === null ? 'n/a' : (Number.isInteger(value) ? value : value.toFixed(1)).toLocaleString();
      draw($(`c-${name}`), series);
    }
  }
}

function draw(canvas, series) {
  const context = canvas.getContext('2d');
  const style = getComputedStyle(canvas);
  const { width, height } = canvas;
  context.clearRect(0, 0, width, height);
  const known = series.filter((value) => value !== null);
  const max = Math.max(1, ...known) * 1.15;
  context.strokeStyle = style.getPropertyValue('--grid').trim() || '#8884';
  context.lineWidth = 1;
  for (const fraction of [0.25, 0.5, 0.75]) {
    context.beginPath();
    context.moveTo(0, height * fraction);
    context.lineTo(width, height * fraction);
    context.stroke();
  }
  context.strokeStyle = style.getPropertyValue('--line').trim() || '#e8590c';
  context.fillStyle = style.getPropertyValue('--fill').trim() || '#e8590c22';
  context.lineWidth = 2;
  context.beginPath();
  let started = false;
  let lastX = 0;
  series.forEach((value, index) => {
    if (value === null) return;
    const x = width - (series.length - 1 - index) * (width / (POINTS - 1));
    const y = height - 4 - (value / max) * (height - 8);
    if (!started) { context.moveTo(x, y); started = true; } else context.lineTo(x, y);
    lastX = x;
  });
  context.stroke();
  if (started) {
    context.lineTo(lastX, height);
    context.lineTo(width - (series.length - 1) * (width / (POINTS - 1)), height);
    context.fill();
  }
}
