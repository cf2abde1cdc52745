/**
 * The per-run state machine behind `toUIMessageStream`: turns each rxagent chunk into zero or
 * more AI SDK `UIMessageChunk`s. Pure and synchronous (no streams, no timers), so it is tested
 * chunk by chunk and reused by anything that writes a UI message stream.
 */
import { generateId, type FinishReason, type UIMessageChunk } from 'ai';
import {
  CLIENT_ERROR_MESSAGE,
  type AgentChunk,
  type ChunkType,
  type DataChunkType,
  type RxFinishReason,
  TripWire,
  type TripwirePayload,
  tripwirePayload,
  jsonOrString,
  thrownMessage,
} from '../../contract/index.js';
import { RETRY_PART_TYPE, TRIPWIRE_PART_TYPE, type RetryUIData, type TripwireUIData } from '../ui-data-types.js';

/** Options shared by `toUIMessageStream` and `toUIMessageStreamResponse`. */
export interface UIChunkEncoderOptions {
  /**
   * The assistant message id sent in the `start` chunk. Default: the run's `start` chunk's
   * `messageId` when it has one, else `generateMessageId()`. The AI SDK's client
   * (`readUIMessageStream`, `useChat`) gives the reply this id; without one the reply has
   * `id: ''` and sending the history back fails validation.
   */
  messageId?: string;
  /** Makes the default `messageId` (default: the AI SDK's `generateId`). */
  generateMessageId?: () => string;
  /** Send reasoning parts. Default true. */
  sendReasoning?: boolean;
  /** Send `source-url` / `source-document` parts. Default true. */
  sendSources?: boolean;
  /** Send the `start` chunk (false when this run continues a message another stream started). Default true. */
  sendStart?: boolean;
  /** Send the `finish` chunk (false when another stream continues the message). Default true. */
  sendFinish?: boolean;
  /** The `errorText` of an `error` chunk, a tool error or a failed run. Default: `'An error occurred.'` (errors may hold secrets). */
  onError?: (error: unknown) => string;
  /**
   * After the `data-tripwire` part, also send an `error` chunk (so `useChat` enters its `error`
   * state with this text). `true` (default) uses the tripwire's reason; `false` sends none.
   */
  tripwireError?: boolean | ((tripwire: TripwireUIData) => string);
  /** Message metadata for the `start` and `finish` chunks. */
  messageMetadata?: (event: { chunk: ChunkType }) => unknown;
}

/** The one client-safe rule (`clientSafeError`): an error's text never reaches a client by default. */
const defaultOnError = (): string => CLIENT_ERROR_MESSAGE;

function finishReasonOf(reason: RxFinishReason | undefined): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'content-filter':
    case 'tool-calls':
    case 'error':
    case 'other':
      return reason;
    default:
      return 'other';
  }
}

function fileUrl(data: string, mimeType: string): string {
  return /^(https?:|data:|blob:)/i.test(data) ? data : `data:${mimeType};base64,${data}`;
}

/** A failed tool result as `errorText`: its message, or the value as JSON or `String`; never throws. */
function stringifyResult(result: unknown): string {
  return thrownMessage(result, jsonOrString) ?? 'a value that cannot be read';
}

/** Converts one run's chunks, in order, to UI message chunks. */
export class UIChunkEncoder {
  readonly #options: UIChunkEncoderOptions;
  readonly #onError: (error: unknown) => string;
  #started = false;
  #ended = false;
  #inStep = false;
  /** After a `reset-step`: the retried attempt reuses the open step (no second `start-step`). */
  #stepReopened = false;
  #stepPartIds: string[] = [];
  readonly #openText = new Set<string>();
  readonly #openReasoning = new Set<string>();
  readonly #streamingInputs = new Set<string>();
  readonly #announcedCalls = new Set<string>();

  constructor(options: UIChunkEncoderOptions = {}) {
    this.#options = options;
    this.#onError = options.onError ?? defaultOnError;
  }

  /** A resumed stream fed from a step boundary: `start` went out already, none is made again. */
  markStarted(): void {
    this.#started = true;
  }

  /** True once a terminal chunk (finish, tripwire, error, abort) was encoded. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The UI chunks for one rxagent chunk. */
  encode(chunk: ChunkType): UIMessageChunk[] {
    if (this.#ended) return [];
    const out: UIMessageChunk[] = [];
    if (chunk.type !== 'start') this.#ensureStarted(out, chunk);
    if (chunk.type.startsWith('data-')) {
      this.#data(chunk as DataChunkType, out);
      return out;
    }
    this.#agent(chunk as AgentChunk, out);
    return out;
  }

  /** The UI chunks for a run that failed with an error notification (not a terminal chunk). */
  fail(error: unknown, runId = 'run'): UIMessageChunk[] {
    if (this.#ended) return [];
    const out: UIMessageChunk[] = [];
    this.#ensureStarted(out, undefined);
    if (TripWire.isInstance(error)) {
      this.#tripwire(tripwirePayload(error), runId, out);
    } else {
      this.#error(error, out);
    }
    return out;
  }

  /**
   * The UI chunks for a run that completed without a terminal chunk (a `take`/`takeWhile` cut
   * it short): the open parts and step end, so no part is left streaming. No `finish` is invented.
   */
  complete(): UIMessageChunk[] {
    if (this.#ended || !this.#started) return [];
    const out: UIMessageChunk[] = [];
    this.#closeStep(out);
    return out;
  }

  #ensureStarted(out: UIMessageChunk[], chunk: ChunkType | undefined): void {
    if (this.#started) return;
    this.#started = true;
    if (this.#options.sendStart === false) return;
    const messageId =
      this.#options.messageId ?? (chunk?.type === 'start' ? chunk.payload.messageId : undefined) ?? (this.#options.generateMessageId ?? generateId)();
    const metadata = chunk === undefined ? undefined : this.#options.messageMetadata?.({ chunk });
    out.push({
      type: 'start',
      messageId,
      ...(metadata === undefined ? {} : { messageMetadata: metadata }),
    });
  }

  #data(chunk: DataChunkType, out: UIMessageChunk[]): void {
    out.push({
      type: chunk.type,
      data: chunk.data,
      ...(chunk.id === undefined ? {} : { id: chunk.id }),
      ...(chunk.transient === undefined ? {} : { transient: chunk.transient }),
    } as UIMessageChunk);
  }

  #closeParts(out: UIMessageChunk[]): void {
    for (const id of this.#openText) out.push({ type: 'text-end', id });
    for (const id of this.#openReasoning) if (this.#options.sendReasoning !== false) out.push({ type: 'reasoning-end', id });
    this.#openText.clear();
    this.#openReasoning.clear();
  }

  #closeStep(out: UIMessageChunk[]): void {
    this.#closeParts(out);
    if (this.#inStep) out.push({ type: 'finish-step' });
    this.#inStep = false;
    this.#stepReopened = false;
    this.#stepPartIds = [];
  }

  #finish(out: UIMessageChunk[], reason: FinishReason, chunk: ChunkType | undefined): void {
    this.#ended = true;
    if (this.#options.sendFinish === false) return;
    const metadata = chunk === undefined ? undefined : this.#options.messageMetadata?.({ chunk });
    out.push({ type: 'finish', finishReason: reason, ...(metadata === undefined ? {} : { messageMetadata: metadata }) });
  }

  #tripwire(payload: TripwirePayload, runId: string, out: UIMessageChunk[], chunk?: ChunkType): void {
    this.#closeStep(out);
    // the last step's parts leave the client's message (a tripwired run shows no blocked text)
    out.push({ type: 'reset-step' });
    const data: TripwireUIData = {
      reason: payload.reason,
      retry: payload.retry === true,
      metadata: payload.metadata ?? null,
      processorId: payload.processorId,
    };
    out.push({ type: TRIPWIRE_PART_TYPE, id: `tripwire-${runId}`, data });
    const errorOption = this.#options.tripwireError ?? true;
    if (errorOption !== false) {
      out.push({ type: 'error', errorText: typeof errorOption === 'function' ? errorOption(data) : data.reason });
    }
    this.#finish(out, 'other', chunk);
  }

  #error(error: unknown, out: UIMessageChunk[], chunk?: ChunkType): void {
    this.#closeStep(out);
    out.push({ type: 'error', errorText: this.#onError(error) });
    this.#finish(out, 'error', chunk);
  }

  #agent(chunk: AgentChunk, out: UIMessageChunk[]): void {
    switch (chunk.type) {
      case 'start':
        this.#ensureStarted(out, chunk);
        return;
      case 'step-start':
        if (this.#stepReopened) {
          this.#stepReopened = false;
          this.#inStep = true;
          return;
        }
        this.#inStep = true;
        this.#stepPartIds = [];
        out.push({ type: 'start-step' });
        return;
      case 'step-finish': {
        const stepResult = chunk.payload.stepResult;
        if (stepResult.reason === 'retry') {
          this.#closeParts(out);
          const data: RetryUIData = {
            stepNumber: chunk.payload.stepNumber,
            cause: stepResult.takeover !== undefined ? 'takeover' : stepResult.tripwire !== undefined ? 'tripwire' : 'api-error',
            reason: stepResult.tripwire?.reason ?? null,
            processorId: stepResult.tripwire?.processorId ?? null,
            discardedPartIds: this.#stepPartIds,
          };
          out.push({ type: 'reset-step' });
          out.push({ type: RETRY_PART_TYPE, data, transient: true });
          // the client removed the attempt's tool parts: its calls count as never announced again
          for (const id of this.#stepPartIds) {
            this.#announcedCalls.delete(id);
            this.#streamingInputs.delete(id);
          }
          this.#stepPartIds = [];
          this.#stepReopened = this.#inStep;
          this.#inStep = false;
          return;
        }
        this.#closeStep(out);
        return;
      }
      case 'text-start':
        // a start for a block already open continues it (as the loop does), never a second part left streaming
        if (this.#openText.has(chunk.payload.id)) return;
        this.#openText.add(chunk.payload.id);
        this.#stepPartIds.push(chunk.payload.id);
        out.push({ type: 'text-start', id: chunk.payload.id, ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}) });
        return;
      case 'text-delta':
        if (!this.#openText.has(chunk.payload.id)) {
          this.#openText.add(chunk.payload.id);
          this.#stepPartIds.push(chunk.payload.id);
          out.push({ type: 'text-start', id: chunk.payload.id });
        }
        if (chunk.payload.text !== '') out.push({ type: 'text-delta', id: chunk.payload.id, delta: chunk.payload.text });
        return;
      case 'text-end':
        if (!this.#openText.delete(chunk.payload.id)) return;
        out.push({ type: 'text-end', id: chunk.payload.id, ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}) });
        return;
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end':
        this.#reasoning(chunk, out);
        return;
      case 'tool-call-input-streaming-start':
        this.#streamingInputs.add(chunk.payload.toolCallId);
        this.#stepPartIds.push(chunk.payload.toolCallId);
        out.push({
          type: 'tool-input-start',
          toolCallId: chunk.payload.toolCallId,
          toolName: chunk.payload.toolName,
          ...(chunk.payload.providerExecuted === undefined ? {} : { providerExecuted: chunk.payload.providerExecuted }),
          ...(chunk.payload.dynamic === undefined ? {} : { dynamic: chunk.payload.dynamic }),
        });
        return;
      case 'tool-call-delta':
        if (!this.#streamingInputs.has(chunk.payload.toolCallId)) {
          if (chunk.payload.toolName === undefined) return;
          this.#streamingInputs.add(chunk.payload.toolCallId);
          this.#stepPartIds.push(chunk.payload.toolCallId);
          out.push({ type: 'tool-input-start', toolCallId: chunk.payload.toolCallId, toolName: chunk.payload.toolName });
        }
        out.push({ type: 'tool-input-delta', toolCallId: chunk.payload.toolCallId, inputTextDelta: chunk.payload.argsTextDelta });
        return;
      case 'tool-call':
        if (!this.#streamingInputs.has(chunk.payload.toolCallId)) this.#stepPartIds.push(chunk.payload.toolCallId);
        this.#announcedCalls.add(chunk.payload.toolCallId);
        out.push({
          type: 'tool-input-available',
          toolCallId: chunk.payload.toolCallId,
          toolName: chunk.payload.toolName,
          input: chunk.payload.args,
          ...(chunk.payload.providerExecuted === undefined ? {} : { providerExecuted: chunk.payload.providerExecuted }),
          ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
          ...(chunk.payload.dynamic === undefined ? {} : { dynamic: chunk.payload.dynamic }),
        });
        return;
      case 'tool-result':
        if (!this.#announcedCalls.has(chunk.payload.toolCallId)) return;
        out.push(
          chunk.payload.isError === true
            ? {
                type: 'tool-output-error',
                toolCallId: chunk.payload.toolCallId,
                errorText: stringifyResult(chunk.payload.result),
                ...(chunk.payload.providerExecuted === undefined ? {} : { providerExecuted: chunk.payload.providerExecuted }),
              }
            : {
                type: 'tool-output-available',
                toolCallId: chunk.payload.toolCallId,
                output: chunk.payload.result,
                ...(chunk.payload.providerExecuted === undefined ? {} : { providerExecuted: chunk.payload.providerExecuted }),
                ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
              },
        );
        return;
      case 'tool-error':
        if (this.#announcedCalls.has(chunk.payload.toolCallId)) {
          out.push({ type: 'tool-output-error', toolCallId: chunk.payload.toolCallId, errorText: this.#onError(chunk.payload.error) });
        } else {
          this.#announcedCalls.add(chunk.payload.toolCallId);
          this.#stepPartIds.push(chunk.payload.toolCallId);
          out.push({
            type: 'tool-input-error',
            toolCallId: chunk.payload.toolCallId,
            toolName: chunk.payload.toolName,
            input: chunk.payload.args,
            errorText: this.#onError(chunk.payload.error),
          });
        }
        return;
      case 'tool-call-approval':
        out.push({ type: 'tool-approval-request', toolCallId: chunk.payload.toolCallId, approvalId: chunk.payload.approvalId });
        return;
      case 'source':
        if (this.#options.sendSources === false) return;
        if (chunk.payload.sourceType === 'url') {
          if (chunk.payload.url === undefined) return;
          out.push({
            type: 'source-url',
            sourceId: chunk.payload.id,
            url: chunk.payload.url,
            ...(chunk.payload.title === undefined ? {} : { title: chunk.payload.title }),
            ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
          });
        } else {
          out.push({
            type: 'source-document',
            sourceId: chunk.payload.id,
            mediaType: chunk.payload.mediaType ?? 'application/octet-stream',
            title: chunk.payload.title ?? chunk.payload.filename ?? chunk.payload.id,
            ...(chunk.payload.filename === undefined ? {} : { filename: chunk.payload.filename }),
            ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
          });
        }
        return;
      case 'file':
        out.push({
          type: 'file',
          url: fileUrl(chunk.payload.data, chunk.payload.mimeType),
          mediaType: chunk.payload.mimeType,
          ...(chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {}),
        });
        return;
      case 'finish':
        this.#closeStep(out);
        this.#finish(out, finishReasonOf(chunk.payload.stepResult.reason), chunk);
        return;
      case 'tripwire':
        this.#tripwire(chunk.payload, chunk.runId, out, chunk);
        return;
      case 'error':
        this.#error(chunk.payload.error, out, chunk);
        return;
      case 'abort':
        this.#closeStep(out);
        this.#ended = true;
        out.push({ type: 'abort', ...(typeof chunk.payload.reason === 'string' ? { reason: chunk.payload.reason } : {}) });
        return;
      default:
        // response-metadata, raw, tool-call-input-streaming-end, object, object-result: nothing for the UI.
        return;
    }
  }

  #reasoning(chunk: AgentChunk<'reasoning-start' | 'reasoning-delta' | 'reasoning-end'>, out: UIMessageChunk[]): void {
    const id = chunk.payload.id;
    const send = this.#options.sendReasoning !== false;
    const metadata = chunk.payload.providerMetadata ? { providerMetadata: chunk.payload.providerMetadata } : {};
    if (chunk.type === 'reasoning-end') {
      if (this.#openReasoning.delete(id) && send) out.push({ type: 'reasoning-end', id, ...metadata });
      return;
    }
    if (!this.#openReasoning.has(id)) {
      this.#openReasoning.add(id);
      this.#stepPartIds.push(id);
      if (send) out.push({ type: 'reasoning-start', id, ...(chunk.type === 'reasoning-start' ? metadata : {}) });
    }
    if (chunk.type === 'reasoning-delta' && send && chunk.payload.text !== '') {
      out.push({ type: 'reasoning-delta', id, delta: chunk.payload.text, ...metadata });
    }
  }
}
