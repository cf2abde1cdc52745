// The inspector page: a chat with the agent (an AI SDK UI message stream from POST /api/chat), the
// runs it recorded, and the selected run as a marble timeline, live from GET /api/events.
import { buildTimeline, renderTimeline, COLUMN_WIDTH } from './timeline.js';
import { startChat, showRun } from './chat.js';
import { runQuery } from './run-ids.js';

const PART_TYPE = 'data-rxagent-inspector';
const $ = (id) => document.getElementById(id);

/** runId → { summary, events (null until loaded), pending (live events that came before the load) } */
const runs = new Map();
let selectedRunId;
let selected; // { seq, lane }
let follow = true;
let renderQueued = false;
/** The run named in the address (`#run=<id>`): selected again after a reload. */
const linked = new URLSearchParams(location.hash.slice(1)).get('run') ?? undefined;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

function queueRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

// ---- the live feed ----------------------------------------------------------------------------

function addRun(summary, events) {
  const known = runs.get(summary.runId);
  if (known) {
    Object.assign(known.summary, summary);
    return known;
  }
  const run = { summary: { ...summary }, events: events ?? null, pending: [] };
  runs.set(summary.runId, run);
  return run;
}

function applyEvent(run, event) {
  run.events.push(event);
  if (event.type === 'revised') {
    // earlier hook events, seen in a new light: a drop that was a hold, a tool result changed through the message list
    const changes = { outcome: event.outcome };
    if (event.releasedBy !== undefined) changes.releasedBy = event.releasedBy;
    if (event.output !== undefined) changes.output = event.output;
    for (const revised of run.events) if (event.seqs.includes(revised.seq)) Object.assign(revised, changes);
  }
}

/**
 * The server no longer keeps a run (past maxRuns, or replaced by a journaled run with its id): the
 * page keeps what it has of it, says so, and expects nothing more for it.
 */
function markEvicted(run, reason) {
  if (run.summary.evicted) return;
  run.summary.evicted = reason;
  if (run.events === null) run.pending = [];
}

function onEvent(event) {
  if (event.type === 'run-evicted') {
    const run = runs.get(event.runId);
    // a live run replaced by the journaled run this page opened with its id: the page shows the journaled one
    if (run && !(event.reason === 'replaced' && run.summary.source === 'journal')) markEvicted(run, event.reason);
  } else if (event.type === 'run-start') {
    const run = addRun({ runId: event.runId, agentId: event.agentId, title: event.title, startedAt: event.startedAt, status: 'running', chunkCount: 0, eventCount: 0, truncated: false, source: event.source ?? 'live' }, []);
    applyEvent(run, event);
    if (follow) select(event.runId);
  } else {
    const run = runs.get(event.runId);
    if (!run) return;
    if (run.events === null) run.pending.push(event);
    else applyEvent(run, event);
    if (event.type === 'chunk') run.summary.chunkCount = event.index + 1;
    if (event.type === 'run-end') {
      run.summary.status = event.status;
      run.summary.durationMs = Math.round(event.t);
      run.summary.truncated = event.droppedEvents > 0 || event.droppedChunks > 0;
    }
  }
  queueRender();
}

/**
 * The feed came back (the server dropped it, or the network did): events sent meanwhile are lost,
 * so every loaded run is loaded again from its record when it is shown (the selected one now).
 */
function resync() {
  for (const run of runs.values()) {
    if (run.events === null) continue;
    run.events = null;
    run.pending = [];
  }
  const run = runs.get(selectedRunId);
  if (run) load(run);
}

function connectFeed() {
  const feed = new EventSource('/api/events');
  let connected = false;
  feed.onopen = () => {
    $('feed-status').textContent = 'live';
    $('feed-status').className = 'feed live';
  };
  feed.onerror = () => {
    $('feed-status').textContent = 'reconnecting…';
    $('feed-status').className = 'feed';
  };
  feed.onmessage = (message) => {
    const chunk = JSON.parse(message.data);
    if (chunk.type !== PART_TYPE) return;
    if (chunk.data.type === 'hello') {
      for (const summary of chunk.data.runs) addRun(summary);
      // a run the page knows and the server no longer lists was evicted while the feed was away
      const kept = new Set(chunk.data.runs.map((summary) => summary.runId));
      for (const [runId, run] of runs) if (!kept.has(runId)) markEvicted(run, 'max-runs');
      if (connected) resync();
      connected = true;
      if (selectedRunId === undefined && linked !== undefined && runs.has(linked)) {
        // a reload: the run in the address again, its timeline and its conversation
        follow = false;
        select(linked, { chat: true });
      } else if (selectedRunId === undefined && chunk.data.runs.length > 0) select(chunk.data.runs[chunk.data.runs.length - 1].runId);
      queueRender();
    } else onEvent(chunk.data);
  };
}

/** The address's hash naming a run (`#run=<id>`), or none when no URL can name it. */
function runHash(runId) {
  const query = runQuery(runId);
  return query === undefined ? location.pathname : '#run=' + query.slice('?id='.length);
}

async function load(run, { chat = false } = {}) {
  const query = runQuery(run.summary.runId);
  if (query === undefined) return;
  const response = await fetch('/api/run' + query);
  if (response.status === 404) {
    markEvicted(run, 'max-runs');
    queueRender();
  }
  if (!response.ok) return;
  adopt(run, await response.json(), { chat });
}

/** A run's whole record (loaded, or opened from the journal) into the page. */
function adopt(run, record, { chat = false } = {}) {
  const last = record.events.length === 0 ? -1 : record.events[record.events.length - 1].seq;
  run.events = [];
  for (const event of record.events) applyEvent(run, event);
  for (const event of run.pending) if (event.seq > last) applyEvent(run, event);
  run.pending = [];
  run.messages = record.messages;
  Object.assign(run.summary, { status: record.status, durationMs: record.durationMs, chunkCount: record.chunkCount, truncated: record.truncated, source: record.source, journal: record.journal });
  if (chat && selectedRunId === run.summary.runId) showRun({ runId: run.summary.runId, messages: run.messages, events: run.events });
  queueRender();
}

/** Selects a run; `chat`: the chat shows its conversation too (a run the user picked, or a reload). */
function select(runId, { chat = false } = {}) {
  if (selectedRunId !== runId) selected = undefined;
  selectedRunId = runId;
  history.replaceState(null, '', runHash(runId));
  const run = runs.get(runId);
  // a live run's events may still be coming: load its record again to show the conversation as it stands
  if (run && !run.summary.evicted && (run.events === null || (chat && run.summary.status !== 'running'))) load(run, { chat });
  else if (run && chat) showRun({ runId, messages: run.messages, events: run.events });
  queueRender();
}

// ---- the journal ---------------------------------------------------------------------------------

/** A row the journal listed and the inspector cannot open: what is wrong with it, as text. */
function journalError(run) {
  const item = el('li', 'journal-error');
  item.dataset.testid = 'journal-error';
  item.dataset.runId = run.runId;
  const where = [run.error.row, run.error.field].filter(Boolean).join('.');
  item.append(el('span', 'run-title', run.runId), el('span', 'badge error', 'unreadable'), el('p', 'journal-problem', `${where ? where + ': ' : ''}${run.error.problem}`));
  return item;
}

async function loadJournal() {
  const response = await fetch('/api/journal');
  if (!response.ok) {
    const problem = el('li', 'journal-error', `The journal could not be listed (${response.status}): ${await response.text()}`);
    problem.dataset.testid = 'journal-error';
    $('journal-list').replaceChildren(problem);
    return;
  }
  const { runs: listed } = await response.json();
  $('journal-list').replaceChildren(
    ...listed.map((run) => {
      if (run.status === 'unreadable') return journalError(run);
      const item = el('li');
      const button = el('button', 'journal-item');
      button.type = 'button';
      Object.assign(button.dataset, { testid: 'journal-item', runId: run.runId, status: run.status, epoch: String(run.epoch) });
      button.title = `${run.runId} · ${run.agentId} · ${run.status} · epoch ${run.epoch}${run.owner ? ' · ' + run.owner : ''} · updated ${run.updatedAt}`;
      button.append(el('span', 'run-title', run.runId), el('span', 'badge ' + run.status, run.epoch > 1 ? `${run.status} · taken over` : run.status));
      button.addEventListener('click', () => openJournalRun(run.runId));
      item.append(button);
      return item;
    }),
  );
}

/** Opens a journaled run (the server reads it from the journal) and selects it. */
async function openJournalRun(runId) {
  const query = runQuery(runId);
  if (query === undefined) return;
  const response = await fetch('/api/journal/run' + query);
  if (!response.ok) return;
  const record = await response.json();
  runs.delete(runId); // opened again: the journal's current record replaces the one kept
  const { events, messages, ...summary } = record;
  const run = addRun(summary, null);
  follow = false;
  selectedRunId = runId;
  selected = undefined;
  history.replaceState(null, '', runHash(runId));
  adopt(run, record, { chat: true });
}

// ---- rendering ----------------------------------------------------------------------------------

function renderRunList() {
  const list = $('run-list');
  list.replaceChildren(
    ...[...runs.values()].reverse().map(({ summary }) => {
      const item = el('li');
      const button = el('button', 'run-item' + (summary.runId === selectedRunId ? ' selected' : ''));
      button.type = 'button';
      Object.assign(button.dataset, { testid: 'run-item', runId: summary.runId, status: summary.status });
      button.append(el('span', 'run-title', summary.title || '(no text)'), el('span', 'badge ' + summary.status, summary.status));
      if (summary.evicted) {
        button.dataset.evicted = summary.evicted;
        button.append(el('span', 'badge evicted', 'evicted'));
      }
      button.addEventListener('click', () => {
        follow = summary.runId === [...runs.keys()].at(-1);
        select(summary.runId, { chat: true });
      });
      item.append(button);
      return item;
    }),
  );
}

function renderHeader(run) {
  const header = $('run-header');
  if (!run) return;
  const { summary } = run;
  const title = el('div', 'run-heading');
  title.append(el('h2', '', summary.title || '(no text)'), el('span', 'badge ' + summary.status, summary.status));
  title.lastChild.dataset.testid = 'run-status';
  const facts = [`${summary.agentId}`, `${summary.chunkCount} chunks`];
  if (summary.durationMs !== undefined) facts.push(`${summary.durationMs} ms`);
  if (summary.truncated) facts.push('truncated (past the caps)');
  if (summary.evicted) {
    facts.push(
      summary.evicted === 'replaced'
        ? 'evicted: replaced by a journaled run with its id (what this page had of it is shown)'
        : 'evicted: the inspector keeps maxRuns runs and no longer keeps this one (what this page had of it is shown)',
    );
  }
  if (summary.journal) facts.push(`journal: ${summary.journal.status}`, `epoch ${summary.journal.epoch}`, ...(summary.journal.owner ? [`owner ${summary.journal.owner}`] : []));
  const meta = el('p', 'run-meta', facts.join(' · '));
  const parts = [title, meta];
  if (summary.source === 'journal') {
    // what the journal lacks is said, not drawn: no processor lanes are made up
    const note = el('p', 'journal-note', 'Opened from the journal: it keeps the chunks only, so there are no processor or judge lanes. Columns are journal entries; a takeover is marked where another owner took the run over.');
    note.dataset.testid = 'journal-note';
    parts.push(note);
  }
  const exportButton = el('button', 'export-button', 'Export marbles');
  exportButton.type = 'button';
  exportButton.dataset.testid = 'export-marbles';
  exportButton.disabled = summary.status === 'running' || summary.truncated || Boolean(summary.evicted);
  exportButton.addEventListener('click', () => exportMarbles(summary.runId));
  header.replaceChildren(...parts, exportButton);
}

function block(label, value) {
  const section = el('div', 'payload');
  section.append(el('h4', '', label));
  const pre = el('pre', '', json(value));
  pre.dataset.testid = 'payload-' + label;
  section.append(pre);
  return section;
}

function renderDetails(run) {
  const details = $('details');
  const event = run && run.events && selected ? run.events.find((candidate) => candidate.seq === selected.seq) : undefined;
  if (!event) {
    details.replaceChildren(el('p', 'empty', 'Click a marble to see its payload.'));
    return;
  }
  const head = el('div', 'details-head');
  const facts = [`t = ${event.t} ms`, `column ${event.column}`, `attempt ${event.attempt}`];
  const blocks = [];
  if (event.type === 'hook' && selected.lane === 'model') {
    head.append(el('h3', '', 'model stream → ' + event.processorId));
    blocks.push(block('chunk', event.input));
  } else if (event.type === 'hook') {
    head.append(el('h3', '', `${event.processorId} · ${event.hook}`), el('span', 'badge ' + event.outcome, event.outcome));
    facts.push(`took ${event.duration} ms`);
    if (event.releasedBy !== undefined) facts.push(`released by #${event.releasedBy}`);
    if (event.input !== undefined) blocks.push(block('in', event.input));
    if (event.output !== undefined) blocks.push(block('out', event.output));
    if (event.error !== undefined) blocks.push(block('error', event.error));
  } else if (event.type === 'judge') {
    head.append(el('h3', '', `${event.processorId} · judge call`), el('span', 'badge ' + (event.outcome === 'ok' ? 'pass' : 'error'), event.outcome));
    facts.push(`${event.provider}/${event.modelId}`, `took ${event.duration} ms`);
    if (event.input !== undefined) blocks.push(block('in', event.input));
    if (event.output !== undefined) blocks.push(block('out', event.output));
  } else if (event.type === 'chunk') {
    head.append(el('h3', '', `#${event.index} ${event.chunkType}`));
    if (event.step !== undefined) facts.push(`step ${event.step}`);
    blocks.push(block('chunk', event.chunk));
  }
  head.firstChild.dataset.testid = 'details-title';
  head.append(el('span', 'details-meta', facts.join(' · ')));
  const body = el('div', 'details-body');
  body.append(...blocks);
  details.replaceChildren(head, body);
}

function render() {
  renderRunList();
  const run = runs.get(selectedRunId);
  renderHeader(run);
  const container = $('timeline');
  if (run && run.events) {
    const live = run.summary.status === 'running';
    const atEnd = container.scrollLeft + container.clientWidth >= container.scrollWidth - COLUMN_WIDTH.max * 2;
    renderTimeline(container, buildTimeline(run.events, { source: run.summary.source }), {
      selectedSeq: selected?.seq,
      selectedLane: selected?.lane,
      onSelect: (marble) => {
        selected = { seq: marble.event.seq, lane: marble.lane };
        queueRender();
      },
    });
    if (live && atEnd) container.scrollLeft = container.scrollWidth;
  }
  renderDetails(run);
}

// ---- export -------------------------------------------------------------------------------------

let exportedRunId;

async function exportMarbles(runId) {
  exportedRunId = runId;
  const query = runQuery(runId);
  if (query === undefined) return;
  const asTest = $('export-as-test').checked ? '&test=1' : '';
  const response = await fetch('/api/run/marbles' + query + asTest);
  const body = await response.json();
  $('export-code').textContent = response.ok ? body.code : body.message;
  if (!$('export-dialog').open) $('export-dialog').showModal();
}

$('close-export').addEventListener('click', () => $('export-dialog').close());
$('export-as-test').addEventListener('change', () => exportedRunId !== undefined && exportMarbles(exportedRunId));
$('copy-export').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText($('export-code').textContent);
    $('copy-export').textContent = 'Copied';
  } catch {
    $('copy-export').textContent = 'Select and copy';
  }
  setTimeout(() => ($('copy-export').textContent = 'Copy'), 1500);
});

// ---- start --------------------------------------------------------------------------------------

fetch('/api/info')
  .then((response) => response.json())
  .then((info) => {
    $('agent-name').textContent = info.agentName;
    const chips = info.suggestions ?? [];
    $('suggestions').replaceChildren(...chips.map((text) => el('button', 'chip', text)));
    startChat({ onSend: () => (follow = true) });
    if (info.journal) {
      $('journal').hidden = false;
      $('journal-refresh').addEventListener('click', loadJournal);
      loadJournal();
    }
  });
connectFeed();
