/** Item 6 of issue 15: the reference's StructuredOutputProcessor fails loudly, ours is untouched. */
import { describe, expect, it } from 'vitest';
import { createRunContext } from '../../src/operators/run-context.js';
import { REFERENCE_CONTROLLER_MESSAGE } from '../../src/operators/internal/reference-state-guard.js';

describe("the 'structured-output' state guard", () => {
  it('reading state.controller throws the error naming the alternatives', () => {
    const state = createRunContext().stateFor('structured-output');
    expect(() => state.controller).toThrow(REFERENCE_CONTROLLER_MESSAGE);
    expect(REFERENCE_CONTROLLER_MESSAGE).toMatch(/rxagent\/processors/);
    expect(REFERENCE_CONTROLLER_MESSAGE).toMatch(/structuredOutput option/);
  });

  it('a processor that writes its own controller first reads it back; spreads and JSON skip the guard', () => {
    const state = createRunContext().stateFor('structured-output');
    expect({ ...state }).toEqual({});
    expect(JSON.stringify(state)).toBe('{}');
    const mine = { enqueue: () => undefined };
    state.controller = mine;
    expect(state.controller).toBe(mine);
    expect({ ...state }).toEqual({ controller: mine });
  });

  it('other processors see a plain state', () => {
    const state = createRunContext().stateFor('moderation');
    expect(state.controller).toBeUndefined();
    expect(Object.getOwnPropertyNames(state)).toEqual([]);
  });
});
