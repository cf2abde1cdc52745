import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dbMessageSchema, isPlainDbMessage, storedMessagesProblem } from '../../src/message-list/schemas/db-message-schema.js';
import { MessageList } from '../../src/message-list/message-list.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';

/** Values a field may take: right ones, wrong ones, absent. */
const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constant(new Date(0)),
  fc.constant(new Date(Number.NaN)),
  fc.constant([]),
  fc.constant({}),
);
const pick = <T>(right: fc.Arbitrary<T>) => fc.oneof({ arbitrary: right, weight: 12 }, { arbitrary: anyValue, weight: 1 });

/** Provider metadata as providers send it (`{ openai: { itemId } }`), or not a record. */
const metadata = pick(
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: fc.constant({}), weight: 1 }, { arbitrary: fc.record({ openai: fc.record({ itemId: fc.string({ maxLength: 3 }) }) }), weight: 1 }),
);

const part = fc.oneof(
  fc.record({ type: pick(fc.constant('text')), text: pick(fc.string()), createdAt: pick(fc.constant(undefined)), providerMetadata: metadata }, { requiredKeys: ['type', 'text'] }),
  fc.record({ type: pick(fc.constant('reasoning')), reasoning: pick(fc.string()), details: pick(fc.constant(undefined)), providerMetadata: metadata }, { requiredKeys: ['type', 'reasoning'] }),
  fc.record({ type: pick(fc.constant('step-start')), model: pick(fc.string()) }, { requiredKeys: ['type'] }),
  fc.record(
    {
      type: pick(fc.constant('tool-invocation')),
      toolInvocation: pick(
        fc.record(
          {
            state: pick(fc.constantFrom('partial-call', 'call', 'result', 'output-error', 'other')),
            toolCallId: pick(fc.string({ maxLength: 2 })),
            toolName: pick(fc.string({ maxLength: 2 })),
            args: anyValue,
            result: anyValue,
            isError: pick(fc.boolean()),
            errorText: pick(fc.string()),
          },
          { requiredKeys: ['state', 'toolCallId', 'toolName'] },
        ),
      ),
      providerExecuted: pick(fc.boolean()),
      title: pick(fc.string()),
      dynamic: pick(fc.boolean()),
    },
    { requiredKeys: ['type', 'toolInvocation'] },
  ),
  anyValue,
);

const message = fc.record(
  {
    id: pick(fc.string({ maxLength: 2 })),
    role: pick(fc.constantFrom('user', 'assistant', 'system', 'tool', 'robot')),
    createdAt: pick(fc.constant(new Date(1))),
    threadId: pick(fc.string()),
    resourceId: pick(fc.string()),
    type: pick(fc.string()),
    content: pick(
      fc.record(
        {
          format: pick(fc.constant(2)),
          parts: pick(fc.array(part, { maxLength: 3 })),
          content: pick(fc.string()),
          metadata: pick(fc.constant(undefined)),
          providerMetadata: metadata,
        },
        { requiredKeys: ['format', 'parts'] },
      ),
    ),
  },
  { requiredKeys: [] },
);

describe('isPlainDbMessage (the hand-checked fast path of stored-message validation)', () => {
  it('never accepts a message the schema rejects', () => {
    let accepted = 0;
    fc.assert(
      fc.property(message, (value) => {
        if (!isPlainDbMessage(value)) return;
        accepted++;
        expect(dbMessageSchema.safeParse(value).success).toBe(true);
      }),
      { numRuns: 3000 },
    );
    // the generator reaches the fast path often enough for the property to mean something
    expect(accepted).toBeGreaterThan(30);
  });

  it('accepts the loop’s own assistant message shape', () => {
    const value = {
      id: 'm1',
      role: 'assistant',
      createdAt: new Date(0),
      threadId: 't',
      content: {
        format: 2,
        parts: [
          { type: 'step-start' },
          { type: 'text', text: 'hi' },
          { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'echo', args: {}, result: 1 } },
        ],
      },
    };
    expect(isPlainDbMessage(value)).toBe(true);
  });

  it('MessageList.add keeps the schema’s error for a stored message that is not plain', () => {
    const bad = { id: 'm1', role: 'assistant', content: { format: 2, parts: [{ type: 'text', text: 7 }] } };
    expect(isPlainDbMessage(bad)).toBe(false);
    expect(() => new MessageList().add(bad as never, 'response')).toThrow(InvalidMessageError);
    expect(() => new MessageList().add(bad as never, 'response')).toThrow('Invalid message at content.parts.0.text: Invalid input: expected string, received number');
  });
});

/** Whether a part of `value` has a string `type` the schema does not know (storedMessagesProblem lets those through). */
function hasUnknownPartType(value: unknown): boolean {
  const parts = (value as { content?: { parts?: unknown } } | null)?.content?.parts;
  if (!Array.isArray(parts)) return false;
  const known = ['text', 'reasoning', 'tool-invocation', 'file', 'source', 'step-start'];
  return parts.some((item: unknown) => {
    const type = (item as { type?: unknown } | null)?.type;
    return typeof type === 'string' && !known.includes(type) && !type.startsWith('data-');
  });
}

describe('storedMessagesProblem (the check after each hook call)', () => {
  it('finds a problem exactly where the schema does, metadata records taken as they come (an unknown part type aside)', () => {
    let hand = 0;
    fc.assert(
      fc.property(message, (value) => {
        if (hasUnknownPartType(value)) return;
        const schema = dbMessageSchema.safeParse(value).success;
        expect(storedMessagesProblem([value]) === undefined).toBe(schema);
        if (schema && !isPlainDbMessage(value)) hand++;
      }),
      { numRuns: 3000 },
    );
    // messages with provider metadata were checked (by hand or by the schema) and found sound
    expect(hand).toBeGreaterThan(30);
  });

  it('a Date, an array or a class instance as provider metadata is a problem (the schema names it)', () => {
    for (const providerMetadata of [new Date(0), [], new Map()]) {
      const value = { id: 'm1', role: 'assistant', content: { format: 2, parts: [{ type: 'text', text: 'hi', providerMetadata }] } };
      expect(storedMessagesProblem([value])).toMatch(/providerMetadata/);
    }
  });
});
