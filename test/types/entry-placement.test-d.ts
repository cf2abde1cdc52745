/**
 * Which entry a name lives in, for the names the root does not carry (issue 33 §3): the legacy
 * AI SDK 4 model types are in `rxagent/ai-sdk`, the JSON codec in `rxagent/durable`, and
 * `RxAgentError` is in the root only. Checked by `npm run typecheck`: an import of a moved name
 * from its old entry fails to compile, so the `@ts-expect-error` lines fail if one comes back.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { RxAgentError, type AnyLanguageModel } from 'rxagent';
import type { LanguageModelV1, LanguageModelV1StreamPart } from 'rxagent/ai-sdk';
import { JsonEncodingError, encodeJson, findNonJson, toJsonValue, type JsonValue, type NonJsonAt } from 'rxagent/durable';
// @ts-expect-error -- the legacy V1 model types are in rxagent/ai-sdk
import type { LanguageModelV1 as RootV1 } from 'rxagent';
// @ts-expect-error -- the JSON codec is in rxagent/durable
import { encodeJson as rootEncodeJson, type JsonValue as RootJsonValue } from 'rxagent';
// @ts-expect-error -- RxAgentError is exported by the root, not by rxagent/message-list
import { RxAgentError as ListError } from 'rxagent/message-list';

describe('names moved out of the root entry', () => {
  it('keeps their types where they moved', () => {
    expectTypeOf<LanguageModelV1>().toMatchTypeOf<AnyLanguageModel>();
    expectTypeOf<LanguageModelV1StreamPart>().toHaveProperty('type');
    expectTypeOf(encodeJson).returns.toEqualTypeOf<string>();
    expectTypeOf(toJsonValue).returns.toEqualTypeOf<JsonValue>();
    expectTypeOf(findNonJson).returns.toEqualTypeOf<NonJsonAt | undefined>();
    expectTypeOf<JsonEncodingError>().toMatchTypeOf<RxAgentError>();
  });

  it('leaves nothing under the old names', () => {
    expectTypeOf<RootV1 | RootJsonValue>().toBeAny();
    expectTypeOf(rootEncodeJson).toBeAny();
    expectTypeOf(ListError).toBeAny();
  });
});
