// The chat: sends the conversation as UIMessages to POST /api/chat and reads the AI SDK UI message
// stream it answers with (what useChat does), in plain JavaScript.

let messages = []; // UIMessage[], sent back with every request
let nextId = 0;
const newId = () => 'm' + ++nextId + '-' + Math.random().toString(36).slice(2, 8);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render(view) {
  view.replaceChildren(
    ...messages.map((message) => {
      const box = el('div', 'message ' + message.role);
      box.dataset.testid = 'message-' + message.role;
      for (const part of message.parts) {
        if (part.type === 'text') box.append(el('span', 'text', part.text));
        else if (part.type.startsWith('tool-')) {
          const tool = el('div', 'tool', `⚙ ${part.type.slice(5)}(${JSON.stringify(part.input ?? {})})`);
          tool.dataset.state = part.state;
          box.append(tool);
        } else if (part.type === 'data-tripwire') {
          const notice = el('div', 'notice tripwire', `⚡ ${part.data.processorId}: ${part.data.reason}`);
          notice.dataset.testid = 'tripwire-notice';
          box.append(notice);
        }
      }
      if (message.retryNotice) box.append(el('div', 'notice retry', '↻ ' + message.retryNotice));
      if (message.errorText && !message.parts.some((part) => part.type === 'data-tripwire')) box.append(el('div', 'notice error', message.errorText));
      return box;
    }),
  );
  view.scrollTop = view.scrollHeight;
}

/** Applies one UI message chunk to the assistant message being streamed. */
function apply(message, open, chunk) {
  const parts = message.parts;
  switch (chunk.type) {
    case 'start-step':
      parts.push({ type: 'step-start' });
      break;
    case 'reset-step': {
      // a processor rejected the attempt: drop its parts
      let start = parts.length - 1;
      while (start >= 0 && parts[start].type !== 'step-start') start--;
      parts.splice(start + 1);
      open.clear();
      break;
    }
    case 'text-start':
      open.set(chunk.id, { type: 'text', text: '' });
      parts.push(open.get(chunk.id));
      break;
    case 'text-delta':
      if (open.has(chunk.id)) open.get(chunk.id).text += chunk.delta;
      break;
    case 'tool-input-available':
      parts.push({ type: 'tool-' + chunk.toolName, toolCallId: chunk.toolCallId, state: 'input-available', input: chunk.input });
      break;
    case 'tool-output-available': {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId);
      if (part) Object.assign(part, { state: 'output-available', output: chunk.output });
      break;
    }
    case 'error':
      message.errorText = chunk.errorText;
      break;
    default:
      if (chunk.type === 'data-rxagent-retry') message.retryNotice = 'retried: ' + chunk.data.reason;
      else if (chunk.type.startsWith('data-') && !chunk.transient) parts.push({ type: chunk.type, id: chunk.id, data: chunk.data });
  }
}

async function readStream(body, onChunk) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let boundary;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data !== '' && data !== '[DONE]') onChunk(JSON.parse(data));
    }
  }
}

/**
 * The assistant's reply of a recorded run, as a UIMessage, from its chunk events: the text of
 * accepted attempts (a step a processor sent back, or a dead owner's attempt a takeover closed,
 * is left out, as a UI drops it), tool calls with their results, a tripwire's notice, an error.
 */
export function replyOf(events) {
  const reply = { id: 'reply', role: 'assistant', parts: [] };
  let step = [];
  for (const event of events) {
    if (event.type !== 'chunk') continue;
    const chunk = event.chunk && typeof event.chunk === 'object' ? event.chunk : {};
    const payload = chunk.payload ?? {};
    switch (event.chunkType) {
      case 'step-start':
        step = [];
        break;
      case 'text-delta': {
        const last = step.at(-1);
        if (last && last.type === 'text' && last.id === payload.id) last.text += payload.text ?? '';
        else step.push({ type: 'text', id: payload.id, text: payload.text ?? '' });
        break;
      }
      case 'tool-call':
        step.push({ type: 'tool-' + payload.toolName, toolCallId: payload.toolCallId, state: 'input-available', input: payload.args ?? payload.input });
        break;
      case 'tool-result': {
        const part = step.find((candidate) => candidate.toolCallId === payload.toolCallId);
        if (part) Object.assign(part, { state: 'output-available', output: payload.result });
        break;
      }
      case 'step-finish':
        if (!(payload.stepResult && payload.stepResult.reason === 'retry')) reply.parts.push(...step.map(({ id, ...part }) => part));
        step = [];
        break;
      case 'tripwire':
        reply.parts = [{ type: 'data-tripwire', data: { processorId: payload.processorId, reason: payload.reason } }];
        break;
      case 'error':
        reply.errorText = typeof payload.error === 'object' && payload.error ? String(payload.error.message ?? 'error') : String(payload.error ?? 'error');
        break;
    }
  }
  return reply;
}

/**
 * Shows a recorded run's conversation in the chat (its messages as the page sent them, then its
 * reply from the record): the chat follows the selected run, and the next message continues it.
 * A run with no messages (opened from a journal, traced by an app) shows its reply alone.
 */
export function showRun(record) {
  const send = document.getElementById('send');
  if (send.disabled) return; // a reply is streaming: the chat stays on it
  const asked = Array.isArray(record.messages) ? record.messages.map((message) => ({ ...message, id: message.id ?? newId() })) : [];
  const reply = replyOf(record.events);
  reply.id = newId();
  messages = [...asked, reply];
  const view = document.getElementById('messages');
  view.dataset.runId = record.runId;
  render(view);
}

/** Wires the chat form and the suggestion chips. */
export function startChat({ onSend }) {
  const view = document.getElementById('messages');
  const form = document.getElementById('chat-form');
  const input = document.getElementById('chat-input');
  const send = document.getElementById('send');

  async function ask(text) {
    onSend();
    messages.push({ id: newId(), role: 'user', parts: [{ type: 'text', text }] });
    const assistant = { id: newId(), role: 'assistant', parts: [] };
    messages.push(assistant);
    render(view);
    send.disabled = true;
    try {
      // a reply a tripwire blocked is not sent back as history
      const wire = messages
        .slice(0, -1)
        .filter((message) => !message.parts.some((part) => part.type === 'data-tripwire'))
        .map(({ id, role, parts }) => ({ id, role, parts }));
      const response = await fetch('/api/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: wire }),
      });
      if (!response.ok || !response.body) throw new Error('HTTP ' + response.status + ' ' + (await response.text()));
      const open = new Map();
      await readStream(response.body, (chunk) => {
        apply(assistant, open, chunk);
        render(view);
      });
    } catch (error) {
      assistant.errorText = String(error);
    } finally {
      // a blocked reply shows only its notice
      if (assistant.parts.some((part) => part.type === 'data-tripwire')) assistant.parts = assistant.parts.filter((part) => part.type === 'data-tripwire');
      render(view);
      send.disabled = false;
      input.focus();
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === '' || send.disabled) return;
    input.value = '';
    ask(text);
  });
  for (const chip of document.querySelectorAll('#suggestions button')) {
    chip.addEventListener('click', () => {
      if (!send.disabled) ask(chip.textContent);
    });
  }
  input.focus();
}
