/** Finding and updating tool invocation parts across a list's messages. */
import type { ProviderMetadata } from 'ai';
import type { MastraDBMessage, ToolInvocation, ToolInvocationPart } from '../types.js';

/** A tool invocation part and the message that holds it. */
export interface InvocationLocation {
  message: MastraDBMessage;
  part: ToolInvocationPart;
}

/** The most recent invocation with `toolCallId` (searching from the end: some providers reuse ids across turns). */
export function findInvocationByCallId(messages: ReadonlyArray<MastraDBMessage>, toolCallId: string): InvocationLocation | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as MastraDBMessage;
    for (const part of message.content.parts) {
      if (part.type === 'tool-invocation' && part.toolInvocation.toolCallId === toolCallId) return { message, part };
    }
  }
  return undefined;
}

/** The earliest pending (call / partial-call) provider-executed invocation of `toolName` among `messages`. */
export function findPendingProviderCall(messages: ReadonlyArray<MastraDBMessage>, toolName: string): InvocationLocation | undefined {
  for (const message of messages) {
    for (const part of message.content.parts) {
      if (
        part.type === 'tool-invocation' &&
        part.providerExecuted === true &&
        part.toolInvocation.toolName === toolName &&
        (part.toolInvocation.state === 'call' || part.toolInvocation.state === 'partial-call')
      ) {
        return { message, part };
      }
    }
  }
  return undefined;
}

/**
 * The invocation after applying `update`: state, id and outcome fields (result, isError,
 * errorText, modelOutput) come from `update`; `args` and `toolName` are kept unless given;
 * other fields of the existing invocation are kept. A new object, so a step boundary's snapshot
 * still holds the old one.
 */
export function mergeInvocation(existing: ToolInvocation, update: ToolInvocation): ToolInvocation {
  const { result: _result, isError: _isError, errorText: _errorText, modelOutput: _modelOutput, ...kept } = existing;
  const merged: ToolInvocation = {
    ...kept,
    state: update.state,
    toolCallId: update.toolCallId,
    toolName: update.toolName || existing.toolName,
    args: update.args === undefined ? existing.args : update.args,
  };
  if (update.result !== undefined) merged.result = update.result;
  if (update.isError !== undefined) merged.isError = update.isError;
  if (update.errorText !== undefined) merged.errorText = update.errorText;
  if (update.modelOutput !== undefined) merged.modelOutput = update.modelOutput;
  return merged;
}

/** Writes `update` into a located invocation (and its part-level provider fields). */
export function applyInvocationUpdate(location: InvocationLocation, update: ToolInvocationPart): void {
  const { part } = location;
  part.toolInvocation = mergeInvocation(part.toolInvocation, update.toolInvocation);
  if (update.providerMetadata) part.providerMetadata = mergeProviderMetadata(part.providerMetadata, update.providerMetadata);
  if (update.providerExecuted !== undefined) part.providerExecuted = update.providerExecuted;
}

/** Provider metadata merged per provider (keys of `update` win). */
export function mergeProviderMetadata(existing: ProviderMetadata | undefined, update: ProviderMetadata): ProviderMetadata {
  const merged: ProviderMetadata = { ...existing };
  for (const [provider, values] of Object.entries(update)) merged[provider] = { ...merged[provider], ...values };
  return merged;
}
