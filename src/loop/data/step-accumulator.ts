/**
 * Collects one step's processed chunks into the step's text, tool calls and the assistant message
 * parts the `MessageList` will hold (so what is stored is what output processors let through).
 */
import type {
  DataPart,
  FilePart,
  MastraDBMessage,
  MastraMessagePart,
  ReasoningPart,
  SourcePart,
  TextPart,
  ToolInvocationPart,
} from '../../message-list/types.js';
import type { ChunkType, DataChunkType, ToolCallInfo, ToolResultInfo } from '../../contract/chunk-types.js';

function signatureOf(metadata: unknown): string | undefined {
  if (metadata === null || typeof metadata !== 'object') return undefined;
  for (const value of Object.values(metadata as Record<string, unknown>)) {
    const signature = (value as { signature?: unknown } | null)?.signature;
    if (typeof signature === 'string') return signature;
  }
  return undefined;
}

/** Deltas joined into one flat string at a time (see {@link TextPieces}). */
const BLOCK = 16;

/**
 * Text appended delta by delta: every {@link BLOCK} deltas become one flat string, joined when read
 * (linear in the text overall; why not `+=`: bench/README.md, house rules).
 */
class TextPieces {
  #pieces: string[] = [];
  /** `#pieces[0 .. #sealed)` are joined blocks, the rest single deltas. */
  #sealed = 0;

  get length(): number {
    return this.#pieces.length;
  }

  append(text: string): void {
    const pieces = this.#pieces;
    pieces.push(text);
    if (pieces.length - this.#sealed >= BLOCK) {
      const block = pieces.slice(this.#sealed).join('');
      pieces.length = this.#sealed;
      pieces.push(block);
      this.#sealed++;
    }
  }

  clear(): void {
    this.#pieces = [];
    this.#sealed = 0;
  }

  /** The text so far, flat (joined once per read after new deltas). */
  toString(): string {
    const pieces = this.#pieces;
    if (pieces.length === 0) return '';
    if (pieces.length === 1) return pieces[0] as string;
    const joined = pieces.join('');
    this.#pieces = [joined];
    this.#sealed = 1;
    return joined;
  }
}

/**
 * A text part of the step's message and its deltas not yet written into `part.text` — or, for the
 * step's first text part while it is the only one (`pieces` undefined), none: its text is the
 * step's text, not kept twice.
 */
interface OpenText {
  /** The text part's id (of its chunks). */
  readonly id: string;
  readonly part: TextPart;
  pieces: TextPieces | undefined;
}

/** What `openTextIds` / `openReasoningIds` are while nothing is open (shared, never written). */
const NONE_OPEN: readonly string[] = Object.freeze([]);

/** `list` with `item` added (an array of one for the first). */
function withItem<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined || list.length === 0) return [item];
  list.push(item);
  return list;
}

/** `list` without `item`'s first occurrence; false when it was not there. */
function removeItem<T>(list: T[] | undefined, item: T): boolean {
  const index = list === undefined ? -1 : list.indexOf(item);
  if (index < 0) return false;
  (list as T[]).splice(index, 1);
  return true;
}

/**
 * One step's content, built from the chunks that passed the output processors. Its collections are
 * small arrays made on first use (a step has one text part, or a few): a plain text step keeps no
 * `Map` nor `Set`.
 */
export class StepAccumulator {
  readonly #text = new TextPieces();
  reasoningText = '';
  toolCalls: ToolCallInfo[] = [];
  toolResults: ToolResultInfo[] = [];
  #parts: MastraMessagePart[] = [];
  /** The step's chunks themselves (a reference each, no copy per chunk); see `compact`. */
  readonly #recorded: ChunkType[] = [];
  /** Whether `compact` will be asked for: otherwise no chunk is kept alive by the accumulator. */
  readonly #keepChunks: boolean;
  #compact: Array<{ type: string; payload?: unknown; data?: unknown }> | undefined;
  /** The step's text parts, in order of their first delta. */
  #texts: OpenText[] = [];
  /** Made on the first reasoning / tool-call chunk (most steps have neither). */
  #reasoning: Map<string, ReasoningPart> | undefined;
  #invocations: Map<string, ToolInvocationPart> | undefined;
  #committed = false;

  #openTextIds: string[] | undefined;
  #openReasoningIds: string[] | undefined;

  /** Ids of the text parts opened and not yet closed, in order (closed for a rejected attempt). */
  get openTextIds(): readonly string[] {
    return this.#openTextIds ?? NONE_OPEN;
  }

  /** Ids of the reasoning parts opened and not yet closed, in order. */
  get openReasoningIds(): readonly string[] {
    return this.#openReasoningIds ?? NONE_OPEN;
  }

  /** Adds a message part of the step. */
  #addPart(part: MastraMessagePart): void {
    this.#parts = withItem(this.#parts, part);
  }

  /** The text part `id`, if the step has it (the last one first: deltas come in runs). */
  #textOf(id: string): OpenText | undefined {
    const texts = this.#texts;
    for (let index = texts.length - 1; index >= 0; index--) {
      const open = texts[index] as OpenText;
      if (open.id === id) return open;
    }
    return undefined;
  }

  /** The message parts of the step so far (text parts with their text so far). */
  get parts(): MastraMessagePart[] {
    // the text parts' pending deltas into their `text` (after `buildMessage` they are written through)
    if (!this.#committed) {
      for (const open of this.#texts) {
        if (open.pieces === undefined) open.part.text = this.#text.toString();
        else if (open.pieces.length > 0) {
          open.part.text += open.pieces.toString();
          open.pieces.clear();
        }
      }
    }
    return this.#parts;
  }

  /** A second text part starts: the first one's text stops being the step's text. */
  #unshare(): void {
    for (const open of this.#texts) {
      if (open.pieces !== undefined) continue;
      if (!this.#committed) open.part.text = this.#text.toString();
      open.pieces = new TextPieces();
    }
  }

  /** The step's text so far (every text delta, in order). */
  get text(): string {
    return this.#text.toString();
  }

  /** Chunks of the step in compact form, for `processLLMResponse` (built when first asked for). */
  get compact(): Array<{ type: string; payload?: unknown; data?: unknown }> {
    if (this.#compact === undefined || this.#compact.length !== this.#recorded.length) {
      this.#compact = this.#recorded.map((chunk) =>
        chunk.type.startsWith('data-')
          ? { type: chunk.type, data: (chunk as DataChunkType).data }
          : { type: chunk.type, payload: (chunk as { payload?: unknown }).payload },
      );
    }
    return this.#compact;
  }

  /**
   * `keepChunks: false` when nobody will read `compact` (no `processLLMResponse` hook): chunks are
   * then not retained for the whole step (bench/README.md, house rules).
   */
  constructor(options: { keepChunks?: boolean } = {}) {
    this.#keepChunks = options.keepChunks ?? true;
  }

  /**
   * Records a processed chunk of the step. A non-transient `data-*` chunk that arrives after the
   * step's message was built (a tool's) is returned as a part of its own, for the caller to store.
   */
  observe(chunk: ChunkType): DataPart | undefined {
    if (this.#keepChunks) this.#recorded.push(chunk);
    switch (chunk.type) {
      case 'text-start':
        if (!this.openTextIds.includes(chunk.payload.id)) this.#openTextIds = withItem(this.#openTextIds, chunk.payload.id);
        break;
      case 'text-delta': {
        const text = chunk.payload.text;
        const id = chunk.payload.id;
        let open = this.#textOf(id);
        if (open === undefined) {
          const first = this.#texts.length === 0;
          if (!first) this.#unshare();
          open = { id, part: { type: 'text', text: '' }, pieces: first ? undefined : new TextPieces() };
          this.#texts = withItem(this.#texts, open);
          this.#addPart(open.part);
        }
        this.#text.append(text);
        // once the message is built, its parts are live: write through
        if (this.#committed) open.part.text += text;
        else open.pieces?.append(text);
        break;
      }
      case 'text-end':
        removeItem(this.#openTextIds, chunk.payload.id);
        if (chunk.payload.providerMetadata) {
          const open = this.#textOf(chunk.payload.id);
          if (open) open.part.providerMetadata = chunk.payload.providerMetadata;
        }
        break;
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end': {
        const reasoning = (this.#reasoning ??= new Map());
        let part = reasoning.get(chunk.payload.id);
        if (part === undefined) {
          part = { type: 'reasoning', reasoning: '', details: [{ type: 'text', text: '' }] };
          reasoning.set(chunk.payload.id, part);
          this.#addPart(part);
        }
        const detail = part.details[0] as { type: 'text'; text: string; signature?: string };
        if (chunk.type === 'reasoning-delta') {
          part.reasoning += chunk.payload.text;
          detail.text += chunk.payload.text;
          this.reasoningText += chunk.payload.text;
        }
        if (chunk.type === 'reasoning-start' && !this.openReasoningIds.includes(chunk.payload.id)) {
          this.#openReasoningIds = withItem(this.#openReasoningIds, chunk.payload.id);
        }
        if (chunk.type === 'reasoning-end') removeItem(this.#openReasoningIds, chunk.payload.id);
        const metadata = chunk.payload.providerMetadata;
        if (metadata) {
          part.providerMetadata = { ...part.providerMetadata, ...metadata };
          const signature = signatureOf(metadata);
          if (signature !== undefined) detail.signature = signature;
        }
        break;
      }
      case 'tool-call': {
        const call: ToolCallInfo = {
          toolCallId: chunk.payload.toolCallId,
          toolName: chunk.payload.toolName,
          args: chunk.payload.args,
          ...(chunk.payload.providerExecuted ? { providerExecuted: true } : {}),
        };
        this.toolCalls.push(call);
        const part: ToolInvocationPart = {
          type: 'tool-invocation',
          toolInvocation: { state: 'call', toolCallId: call.toolCallId, toolName: call.toolName, args: call.args },
          ...(call.providerExecuted ? { providerExecuted: true } : {}),
          ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
        };
        (this.#invocations ??= new Map()).set(call.toolCallId, part);
        this.#addPart(part);
        break;
      }
      case 'tool-result': {
        const payload = chunk.payload;
        const call = this.toolCalls.find((candidate) => candidate.toolCallId === payload.toolCallId);
        this.toolResults.push({
          toolCallId: payload.toolCallId,
          toolName: payload.toolName,
          args: payload.args ?? call?.args,
          result: payload.result,
          ...(payload.isError ? { isError: true } : {}),
          ...(payload.providerExecuted ? { providerExecuted: true } : {}),
        });
        const part = this.#invocations?.get(payload.toolCallId);
        if (part !== undefined && !this.#committed) {
          part.toolInvocation = { ...part.toolInvocation, state: 'result', result: payload.result, ...(payload.isError ? { isError: true } : {}) };
        }
        break;
      }
      case 'tool-error':
        this.toolResults.push({
          toolCallId: chunk.payload.toolCallId,
          toolName: chunk.payload.toolName,
          args: chunk.payload.args,
          result: chunk.payload.error instanceof Error ? chunk.payload.error.message : chunk.payload.error,
          isError: true,
        });
        break;
      case 'source': {
        const payload = chunk.payload;
        const part: SourcePart = {
          type: 'source',
          source: {
            sourceType: payload.sourceType,
            id: payload.id,
            ...(payload.url === undefined ? {} : { url: payload.url }),
            ...(payload.title === undefined ? {} : { title: payload.title }),
            ...(payload.mediaType === undefined ? {} : { mediaType: payload.mediaType }),
            ...(payload.filename === undefined ? {} : { filename: payload.filename }),
          },
        };
        this.#addPart(part);
        break;
      }
      case 'file': {
        const part: FilePart = { type: 'file', mimeType: chunk.payload.mimeType, data: chunk.payload.data };
        this.#addPart(part);
        break;
      }
      default:
        if (chunk.type.startsWith('data-')) {
          const data = chunk as DataChunkType;
          if (data.transient !== true) {
            const part: DataPart = { type: data.type, data: data.data, ...(data.id === undefined ? {} : { id: data.id }) };
            if (this.#committed) return part;
            this.#addPart(part);
          }
        }
        return undefined;
    }
    return undefined;
  }

  /**
   * An accumulator whose step's message is built already (an attempt restored after its model
   * output): its text, and the tool calls and results of its recorded step (the same arrays).
   */
  static afterMessage(step: { text: string; reasoningText?: string | undefined; toolCalls: ToolCallInfo[]; toolResults: ToolResultInfo[] }): StepAccumulator {
    const accumulator = new StepAccumulator({ keepChunks: false });
    if (step.text !== '') accumulator.#text.append(step.text);
    accumulator.reasoningText = step.reasoningText ?? '';
    accumulator.toolCalls = step.toolCalls;
    accumulator.toolResults = step.toolResults;
    accumulator.#committed = true;
    return accumulator;
  }

  /** The assistant message of the step, or undefined when the step produced nothing to store. */
  buildMessage(id: string, createdAt: Date, threadId?: string, resourceId?: string): MastraDBMessage | undefined {
    const all = this.parts;
    this.#committed = true;
    const parts = all.filter((part) => part.type !== 'text' || part.text.length > 0);
    if (parts.length === 0) return undefined;
    return {
      id,
      role: 'assistant',
      createdAt,
      ...(threadId === undefined ? {} : { threadId }),
      ...(resourceId === undefined ? {} : { resourceId }),
      content: { format: 2, parts: [{ type: 'step-start' }, ...parts] },
    };
  }
}
