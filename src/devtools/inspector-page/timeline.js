// The marble timeline of one run: lanes (one per processor and hook, judges, tools, the run's
// output), columns (one per pass of a chunk through the processors), bands (steps and attempts).
// Plain DOM: every marble is a <button> to click for its payload.

/** Column widths (px): runs are fitted to the view between these; past the smallest, the timeline scrolls. */
export const COLUMN_WIDTH = { min: 12, max: 24 };

/** Shapes and colours tell outcomes apart (see the CSS); these few also get a sign. */
const GLYPHS = { retry: '↻', error: '!', takeover: '⇄' };

/** The colour family of a chunk type. */
export function kindOf(chunkType) {
  if (typeof chunkType !== 'string') return 'control';
  if (chunkType.startsWith('text-')) return 'text';
  if (chunkType.startsWith('reasoning-')) return 'reasoning';
  if (chunkType.startsWith('tool-')) return 'tool';
  if (chunkType.startsWith('data-')) return 'data';
  if (chunkType === 'tripwire') return 'abort';
  if (chunkType === 'error') return 'error';
  return 'control';
}

function chunkTypeOf(payload) {
  return payload && typeof payload === 'object' && typeof payload.type === 'string' ? payload.type : undefined;
}

function shortText(payload) {
  const inner = payload && payload.payload;
  if (!inner) return '';
  if (typeof inner.text === 'string') return JSON.stringify(inner.text.length > 40 ? inner.text.slice(0, 39) + '…' : inner.text);
  if (typeof inner.toolName === 'string') return inner.toolName;
  if (typeof inner.reason === 'string') return inner.reason;
  return '';
}

/**
 * Lanes, marbles and bands from a run's events.
 * Lanes keep the order they first appear in (the pipeline's order), with "model stream" before the
 * first processOutputStream lane, and "tools" and "run output" last.
 */
export function buildTimeline(events, { source = 'live' } = {}) {
  const journal = source === 'journal';
  const lanes = new Map();
  const marbles = [];
  const bands = [];
  const columnTime = new Map();
  const firstStreamInColumn = new Set();
  let columns = 0;
  const lane = (key, title, subtitle, pinned = 0) => {
    if (!lanes.has(key)) lanes.set(key, { key, title, subtitle, pinned, order: lanes.size });
    return key;
  };
  const openSteps = new Map();
  for (const event of events) {
    columns = Math.max(columns, event.column + 1);
    if (!columnTime.has(event.column)) columnTime.set(event.column, event.t);
    if (event.type === 'hook') {
      const stream = event.hook === 'processOutputStream';
      const chunkType = stream ? chunkTypeOf(event.input) : undefined;
      if (stream && !firstStreamInColumn.has(event.column)) {
        firstStreamInColumn.add(event.column);
        lane('model', 'model stream', 'into the output processors');
        marbles.push({ event, lane: 'model', column: event.column, outcome: 'pass', kind: kindOf(chunkType), title: `${chunkType} ${shortText(event.input)} → processors`, payload: 'input' });
      }
      const key = lane(`hook:${event.processorId}:${event.hook}`, event.processorId, event.hook);
      const what = stream ? `${chunkType} ${shortText(event.input)}` : event.hook;
      marbles.push({
        event,
        lane: key,
        column: event.column,
        outcome: event.outcome,
        kind: stream ? kindOf(chunkType) : 'control',
        title: `${event.processorId} · ${what} · ${event.outcome} · ${event.duration} ms`,
      });
    } else if (event.type === 'judge') {
      const key = lane(`judge:${event.processorId}`, event.processorId, `judge · ${event.modelId}`);
      marbles.push({ event, lane: key, column: event.column, outcome: event.outcome === 'ok' ? 'judge' : 'judge-error', kind: 'judge', title: `${event.processorId} asked ${event.provider}/${event.modelId} · ${event.outcome} · ${event.duration} ms` });
    } else if (event.type === 'takeover') {
      // a journaled run: another owner claimed the run and wrote the chunks from here on
      const title = `taken over: epoch ${event.previousEpoch} → ${event.epoch} (another owner claimed the run)`;
      marbles.push({ event, lane: lane('owners', 'owners', 'epochs, from the journal', -1), column: event.column, outcome: 'takeover', kind: 'control', title });
    } else if (event.type === 'chunk') {
      const kind = kindOf(event.chunkType);
      const outcome = event.chunkType === 'tripwire' ? 'abort' : event.chunkType === 'error' ? 'error' : 'pass';
      const output = journal ? lane('output', 'run output', 'the chunks, from the journal', 2) : lane('output', 'run output', 'what the subscriber got', 2);
      marbles.push({ event, lane: output, column: event.column, outcome, kind, title: `#${event.index} ${event.chunkType} ${event.label ? JSON.stringify(event.label) : ''}` });
      if (event.chunkType === 'tool-call' || event.chunkType === 'tool-result' || event.chunkType === 'tool-error') {
        const glyph = event.chunkType === 'tool-call' ? 'call' : event.chunkType === 'tool-result' ? 'result' : 'error';
        marbles.push({ event, lane: lane('tools', 'tools', 'calls and results', 1), column: event.column, outcome: glyph === 'error' ? 'error' : 'pass', kind: 'tool', glyph: glyph === 'call' ? '⚙' : glyph === 'result' ? '✓' : '!', title: `${event.label} · ${glyph}` });
      }
      if (event.chunkType === 'step-start') openSteps.set(event.step, { from: event.column, attempt: event.attempt });
      if (event.chunkType === 'step-finish') {
        const step = event.chunk && event.chunk.payload ? event.chunk.payload.stepNumber : undefined;
        const open = openSteps.get(step);
        const stepResult = event.chunk && event.chunk.payload && event.chunk.payload.stepResult ? event.chunk.payload.stepResult : {};
        const reason = stepResult.reason ?? '';
        // a takeover marker: the new owner closed the attempt its dead predecessor left open
        const takenOver = reason === 'retry' && stepResult.takeover ? stepResult.takeover : undefined;
        if (open) {
          openSteps.delete(step);
          const attempt = open.attempt > 1 ? ` · attempt ${open.attempt}` : '';
          const verdict = takenOver ? ` · taken over (epoch ${takenOver.epoch})` : reason === 'retry' ? ' · rejected ↻' : reason === 'tripwire' ? ' · tripwire' : '';
          bands.push({ from: open.from, to: event.column, label: `step ${step}${attempt}${verdict}`, kind: takenOver ? 'takeover' : reason === 'retry' ? 'retry' : reason === 'tripwire' ? 'abort' : 'step' });
        }
      }
    }
  }
  for (const [step, open] of openSteps) bands.push({ from: open.from, to: columns - 1, label: `step ${step}`, kind: 'step' });
  const ordered = [...lanes.values()].sort((a, b) => a.pinned - b.pinned || a.order - b.order);
  // a judge's lane goes under the first lane of the processor that made the call
  for (const judge of ordered.filter((candidate) => candidate.key.startsWith('judge:'))) {
    ordered.splice(ordered.indexOf(judge), 1);
    const owner = ordered.findIndex((candidate) => candidate.key.startsWith('hook:') && candidate.title === judge.title);
    ordered.splice(owner === -1 ? ordered.length : owner + 1, 0, judge);
  }
  return { lanes: ordered, marbles, bands, columns, columnTime, source };
}

/**
 * The ruler's labels: columns are passes (a chunk's way through the processors, or a hook phase),
 * not a time axis; each tick names its pass and when it began. A journaled run has no times, only
 * the order of its entries (its virtual time: entry n at frame n).
 */
export function rulerLabels(timeline) {
  const journal = timeline.source === 'journal';
  return {
    label: journal ? 'entry' : 'pass · ms',
    title: journal ? 'columns are journal entries, in order (replayed on virtual time: entry n at frame n)' : 'columns are passes, not a time axis: each tick names its pass and the ms since the run started when it began',
    tick: (column, t) => (journal ? `#${Math.round(t)}` : `${column} · ${Math.round(t)} ms`),
    tickTitle: (column, t) => (journal ? `journal entry ${Math.round(t)}` : `pass ${column}, began ${t} ms after the run started`),
  };
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Renders the timeline into `container`; `onSelect(marble)` on click. */
export function renderTimeline(container, timeline, { selectedSeq, selectedLane, onSelect }) {
  const labelWidth = 190;
  const fitted = Math.floor((container.clientWidth - labelWidth - 30) / Math.max(timeline.columns, 1));
  const COLUMN = Math.max(COLUMN_WIDTH.min, Math.min(COLUMN_WIDTH.max, fitted));
  const width = Math.max(timeline.columns, 1) * COLUMN + 30;
  const grid = el('div', 'tl');
  grid.style.setProperty('--track-width', width + 'px');
  grid.style.setProperty('--marble', Math.min(16, COLUMN - 3) + 'px');

  const ruler = el('div', 'tl-row tl-ruler');
  const labels = rulerLabels(timeline);
  const rulerLabel = el('div', 'tl-label', labels.label);
  rulerLabel.title = labels.title;
  rulerLabel.dataset.testid = 'ruler-label';
  ruler.append(rulerLabel);
  const ticks = el('div', 'tl-track');
  let lastTick = -Infinity;
  for (let column = 0; column < timeline.columns; column++) {
    const t = timeline.columnTime.get(column);
    if (t === undefined || (column - lastTick) * COLUMN < 90) continue;
    lastTick = column;
    const tick = el('span', 'tl-tick', labels.tick(column, t));
    tick.title = labels.tickTitle(column, t);
    tick.dataset.testid = 'ruler-tick';
    tick.style.left = column * COLUMN + 'px';
    ticks.append(tick);
  }
  ruler.append(ticks);
  grid.append(ruler);

  const body = el('div', 'tl-body');
  const bands = el('div', 'tl-bands');
  for (const band of timeline.bands) {
    const node = el('div', 'tl-band ' + band.kind);
    node.style.left = band.from * COLUMN - 2 + 'px';
    node.style.width = (band.to - band.from + 1) * COLUMN + 2 + 'px';
    node.append(el('span', 'tl-band-label', band.label));
    node.dataset.testid = 'band';
    node.dataset.kind = band.kind;
    bands.append(node);
  }
  body.append(bands);

  const byLane = new Map(timeline.lanes.map((lane) => [lane.key, []]));
  for (const marble of timeline.marbles) byLane.get(marble.lane).push(marble);
  for (const lane of timeline.lanes) {
    const row = el('div', 'tl-row tl-lane');
    row.dataset.lane = lane.key;
    row.dataset.testid = 'lane';
    const label = el('div', 'tl-label');
    label.append(el('strong', '', lane.title), el('small', '', lane.subtitle));
    label.title = `${lane.title} · ${lane.subtitle}`;
    const track = el('div', 'tl-track');
    for (const marble of byLane.get(lane.key)) {
      const button = el('button', `marble ${marble.outcome} k-${marble.kind}`, marble.glyph ?? GLYPHS[marble.outcome] ?? '');
      button.type = 'button';
      button.style.left = marble.column * COLUMN + 'px';
      button.title = marble.title;
      button.setAttribute('aria-label', marble.title);
      Object.assign(button.dataset, {
        testid: 'marble',
        seq: String(marble.event.seq),
        lane: lane.key,
        outcome: marble.outcome,
        kind: marble.kind,
        chunkType: marble.event.chunkType ?? chunkTypeOf(marble.event.input) ?? '',
      });
      if (marble.event.seq === selectedSeq && lane.key === selectedLane) button.classList.add('selected');
      button.addEventListener('click', () => onSelect(marble));
      track.append(button);
    }
    row.append(label, track);
    body.append(row);
  }
  grid.append(body);
  container.replaceChildren(grid);
}
