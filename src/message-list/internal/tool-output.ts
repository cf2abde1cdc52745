/** Maps between a stored tool invocation's result fields and a model tool-result `output`. */
import type { JSONValue } from '@ai-sdk/provider';
import type { ToolResultPart } from 'ai';
import type { ToolInvocation } from '../types.js';

/** A model tool result's `output`. */
export type ToolResultOutput = ToolResultPart['output'];

/** The result fields of a stored invocation. */
export type InvocationResult = Pick<ToolInvocation, 'state' | 'result' | 'errorText' | 'isError' | 'modelOutput'>;

/**
 * Stored result fields from a model `output`: text/json → `result`; error-text → output-error
 * with `errorText`; error-json → output-error with `result` and `errorText` (its JSON); content
 * and execution-denied (and any output carrying providerOptions) also keep the exact output in
 * `modelOutput`.
 */
export function invocationResultFromOutput(output: ToolResultOutput): InvocationResult {
  const keep = 'providerOptions' in output && output.providerOptions ? { modelOutput: output } : {};
  switch (output.type) {
    case 'text':
    case 'json':
      return { state: 'result', result: output.value, ...keep };
    case 'error-text':
      return { state: 'output-error', errorText: output.value, ...keep };
    case 'error-json':
      return { state: 'output-error', result: output.value, isError: true, errorText: JSON.stringify(output.value), ...keep };
    case 'content':
      return { state: 'result', result: output.value, modelOutput: output };
    case 'execution-denied':
      return { state: 'output-error', errorText: output.reason ?? 'Tool execution denied.', modelOutput: output };
  }
}

/**
 * The model `output` for a stored invocation that has a result or an error: `modelOutput` when
 * kept; a string result → text; another result → json (`undefined` → null); an error → error-json
 * when it has a `result`, else error-text.
 */
export function outputFromInvocation(invocation: ToolInvocation): ToolResultOutput {
  if (invocation.modelOutput) return invocation.modelOutput;
  const { result } = invocation;
  if (invocation.state === 'output-error' || invocation.isError) {
    if (result === undefined) return { type: 'error-text', value: invocation.errorText ?? '' };
    return typeof result === 'string' ? { type: 'error-text', value: result } : { type: 'error-json', value: toJsonValue(result) };
  }
  return typeof result === 'string' ? { type: 'text', value: result } : { type: 'json', value: toJsonValue(result) };
}

function toJsonValue(value: unknown): JSONValue {
  return value === undefined ? null : (value as JSONValue);
}
