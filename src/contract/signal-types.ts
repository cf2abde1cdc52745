/** Signals: extra turns a processor sends to the next model request of its run (`sendSignal`). */
import type { SharedV4ProviderOptions } from '@ai-sdk/provider';

/** A text part of a signal's contents. */
export interface SignalTextPart {
  type: 'text';
  text: string;
  providerOptions?: SharedV4ProviderOptions;
}

/**
 * What `sendSignal` takes (the reference implementation's signal input, text contents):
 * `type` `'reactive'` / `'system-reminder'` (tag `system-reminder`), `'user'` / `'user-message'`
 * (a plain user turn), `'notification'`, `'state'`; `tagName` overrides the XML tag.
 */
export interface ProcessorSignalInput {
  type: 'reactive' | 'system-reminder' | 'user' | 'user-message' | 'notification' | 'state';
  contents: string | SignalTextPart[];
  tagName?: string;
  attributes?: Record<string, string | number | boolean | null | undefined>;
  metadata?: Record<string, unknown>;
  providerOptions?: SharedV4ProviderOptions;
  id?: string;
  /** Accepted for compatibility: rxagent's signals are always for this run only. */
  transient?: boolean;
}

/** A signal as accepted: normalised type and tag, its id and time. */
export interface ProcessorSignal {
  id: string;
  type: 'reactive' | 'user' | 'notification' | 'state';
  tagName: string;
  contents: string;
  attributes?: Record<string, string | number | boolean | null | undefined>;
  metadata?: Record<string, unknown>;
  providerOptions?: SharedV4ProviderOptions;
  createdAt: Date;
}

/**
 * `sendSignal(signal)`: adds a user turn (`<tag attr="…">contents</tag>`, or the plain text for a
 * `user` signal) after the history of the run's next model request, for that request only. It is
 * not added to the `MessageList`, so memory never stores it.
 */
export type SendSignalFunction = (signal: ProcessorSignalInput) => Promise<ProcessorSignal>;
