/**
 * Options shared by the converters that create stored messages: where ids and timestamps come
 * from (injectable for deterministic tests).
 *
 * @example
 * ```ts
 * import { fromModelMessage, type ConversionOptions } from 'rxagent/message-list';
 * const options: ConversionOptions = { generateId: () => 'msg-1', now: () => new Date(0) };
 * fromModelMessage({ role: 'user', content: 'hi' }, options);
 * ```
 */
export interface ConversionOptions {
  /** Id for a message that has none. Default: `crypto.randomUUID()`. */
  generateId?: () => string;
  /** Clock for `createdAt`. Default: `new Date()`. */
  now?: () => Date;
}

/**
 * The default message id: `crypto.randomUUID()`, flattened into one string (`normalize()`: the
 * same value; see the performance house rules in bench/README.md).
 */
export function randomMessageId(): string {
  return crypto.randomUUID().normalize();
}

/** Resolves the defaults of `ConversionOptions`. */
export function resolveConversionOptions(options: ConversionOptions | undefined): Required<ConversionOptions> {
  return {
    generateId: options?.generateId ?? randomMessageId,
    now: options?.now ?? (() => new Date()),
  };
}
