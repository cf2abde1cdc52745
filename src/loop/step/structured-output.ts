/**
 * Structured output in the loop (`structuredOutput: { schema }` without a second model): the
 * provider is asked for JSON matching the schema, `object` chunks stream the partial object, the
 * final text is validated — a mismatch is a `TripWire` with `retry: true` from `structured-output`,
 * so the retry machinery re-runs the step when a budget is set (and a rejected attempt's object is
 * never reported).
 */
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { StepInput } from '../../operators/process-input-step.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { StepAccumulator } from '../data/step-accumulator.js';
import { toToolSchema, validateToolInput } from '../../model/tool-schema.js';
import { thenMaybe, type MaybePromise } from '../../contract/maybe-async.js';

/** The id structured-output tripwires carry. */
export const STRUCTURED_OUTPUT_ID = 'structured-output';

/**
 * `responseFormat` for a step with structured output (and no structuring model): synchronous
 * unless the schema's JSON form is a promise.
 */
export function structuredResponseFormat(stepInput: StepInput): MaybePromise<Pick<LanguageModelV4CallOptions, 'responseFormat'>> {
  const structured = stepInput.structuredOutput;
  if (structured === undefined || structured.model !== undefined) return {};
  return thenMaybe(toToolSchema(structured.schema).jsonSchema as MaybePromise<JSONSchema7>, (schema) => ({ responseFormat: { type: 'json', schema } }));
}

/**
 * Validates a final step's text against the schema; records the object or throws a retryable
 * TripWire. Synchronous when the schema validates synchronously (zod without async refinements, a
 * JSON schema): a step with structured output stays on virtual time.
 */
export function validateStructuredOutput(stepInput: StepInput, accumulator: StepAccumulator, stepResult: StepResult): MaybePromise<never[]> {
  const structured = stepInput.structuredOutput;
  if (structured === undefined || structured.model !== undefined) return [];
  if (accumulator.toolCalls.some((call) => !call.providerExecuted)) return [];
  let value: unknown;
  try {
    value = JSON.parse(accumulator.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch (error) {
    throw new TripWire(`The answer is not valid JSON: ${(error as Error).message}`, { retry: true, metadata: { text: accumulator.text } }, STRUCTURED_OUTPUT_ID);
  }
  return thenMaybe(validateToolInput(structured.schema, value), (validated): never[] => {
    if (!validated.success) {
      const reason = `The answer does not match the schema: ${validated.error.message}`;
      let tripwire: TripWire;
      try {
        tripwire = new TripWire(reason, { retry: true, metadata: { value } }, STRUCTURED_OUTPUT_ID);
      } catch {
        // a parsed answer the codec cannot write (nested past its depth): the text it was parsed from
        tripwire = new TripWire(reason, { retry: true, metadata: { text: accumulator.text } }, STRUCTURED_OUTPUT_ID);
      }
      throw tripwire;
    }
    stepResult.object = validated.value;
    return [];
  });
}
