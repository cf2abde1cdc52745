/** Signals: extra turns a processor sends to the next model request of its run (`sendSignal`). */
import type { SharedV4ProviderOptions } from '@ai-sdk/provider';

/** A text part of a signal's contents. */
export interface SignalTextPart {
  /** What kind of value this is. */
  type: 'text';
  /** The text. */
  text: string;
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
}

/**
 * What `sendSignal` takes (the reference implementation's signal input, text contents):
 * `type` `'reactive'` / `'system-reminder'` (tag `system-reminder`), `'user'` / `'user-message'`
 * (a plain user turn), `'notification'`, `'state'`; `tagName` overrides the XML tag.
 */
export interface ProcessorSignalInput {
  /** What kind of value this is. */
  type: 'reactive' | 'system-reminder' | 'user' | 'user-message' | 'notification' | 'state';
  /** The signal's text, or text parts. */
  contents: string | SignalTextPart[];
  /** The XML tag of the signal's turn. */
  tagName?: string;
  /** Attributes of the signal's tag. */
  attributes?: Record<string, string | number | boolean | null | undefined>;
  /** Free-form metadata. */
  metadata?: Record<string, unknown>;
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** The id. */
  id?: string;
  /** Accepted for compatibility: rxagent's signals are always for this run only. */
  transient?: boolean;
}

/** A signal as accepted: normalised type and tag, its id and time. */
export interface ProcessorSignal {
  /** The id. */
  id: string;
  /** What kind of value this is. */
  type: 'reactive' | 'user' | 'notification' | 'state';
  /** The XML tag of the signal's turn. */
  tagName: string;
  /** The signal's text, or text parts. */
  contents: string;
  /** Attributes of the signal's tag. */
  attributes?: Record<string, string | number | boolean | null | undefined>;
  /** Free-form metadata. */
  metadata?: Record<string, unknown>;
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** When it was created. */
  createdAt: Date;
}

/**
 * `sendSignal(signal)`: adds a user turn (`<tag attr="…">contents</tag>`, or the plain text for a
 * `user` signal) after the history of the run's next model request, for that request only. It is
 * not added to the `MessageList`, so memory never stores it.
 */
export type SendSignalFunction = (signal: ProcessorSignalInput) => Promise<ProcessorSignal>;
