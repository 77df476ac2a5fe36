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
  // Sized to its box and the screen's pixel ratio, so lines stay crisp.
  const ratio = window.devicePixelRatio || 1;
  const width = Math.round(canvas.clientWidth * ratio), height = Math.round(canvas.clientHeight * ratio);
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  const context = canvas.getContext('2d');
  const style = getComputedStyle(canvas);
  const color = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  context.clearRect(0, 0, width, height);
  const known = series.filter((value) => value !== null);
  const max = niceCeiling(Math.max(1, ...known) * 1.1);
  const top = 14 * ratio, bottom = height - 14 * ratio;
  const y = (value) => bottom - (value / max) * (bottom - top);
  const x = (index) => width - (series.length - 1 - index) * (width / (POINTS - 1));
  context.strokeStyle = color('--grid', '#8884');
  context.lineWidth = ratio;
  for (const fraction of [0, 0.5, 1]) {
    context.beginPath();
    context.moveTo(0, y(max * fraction));
    context.lineTo(width, y(max * fraction));
    context.stroke();
  }
  context.fillStyle = color('--muted', '#888');
  context.font = `${11 * ratio}px system-ui, sans-serif`;
  context.textBaseline = 'bottom';
  context.fillText(max.toLocaleString(), 2 * ratio, top - 2 * ratio);
  context.textBaseline = 'alphabetic';
  context.fillText('2 min ago', 2 * ratio, height - 2 * ratio);
  const now = 'now';
  context.fillText(now, width - context.measureText(now).width - 2 * ratio, height - 2 * ratio);
  const points = series.map((value, index) => (value === null ? null : [x(index), y(value)])).filter(Boolean);
  if (points.length === 0) return;
  context.beginPath();
  points.forEach(([px, py], index) => (index ? context.lineTo(px, py) : context.moveTo(px, py)));
  context.strokeStyle = color('--line', '#e8590c');
  context.lineWidth = 2 * ratio;
  context.lineJoin = 'round';
  context.stroke();
  context.lineTo(points[points.length - 1][0], bottom);
  context.lineTo(points[0][0], bottom);
  context.closePath();
  context.fillStyle = color('--fill', '#e8590c22');
  context.fill();
}

/** 1, 2 or 5 times a power of ten, at or above `value`: round numbers for the scale. */
function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value);
}
