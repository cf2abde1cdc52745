/**
 * ModerationProcessor's processInput called as the reference's own unit tests call it (issue 34):
 * `{ messages, abort }` only — no messageList, no state. Each strategy works; nothing fails open.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ProcessInputArgs } from '../../src/contract/processor-types.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { judgeModel, textMessage } from './support/harness.js';

const clean = '{"categories": {"violence": 0.02, "hate": 0}}';
const violent = '{"categories": {"violence": 0.93, "hate": 0.1}, "reason": "describes killing"}';
const moderator = () => judgeModel(({ prompt }) => (prompt.includes('KILL') ? violent : clean));
const blocked = new Error('blocked');
const direct = (messages: ReturnType<typeof textMessage>[], abort: ProcessInputArgs['abort']) => ({ messages, abort }) as unknown as ProcessInputArgs;

describe('ModerationProcessor.processInput without a messageList or state', () => {
  it("'filter' drops the flagged message and returns the others (no TypeError on the missing list)", async () => {
    const abort = vi.fn(() => {
      throw blocked;
    }) as unknown as ProcessInputArgs['abort'];
    const messages = [textMessage('u1', 'user', 'hello there'), textMessage('u2', 'user', 'I will KILL it')];
    const result = await new ModerationProcessor({ model: moderator(), strategy: 'filter' }).processInput(direct(messages, abort));
    expect(result).toEqual([messages[0]]);
    expect(abort).not.toHaveBeenCalled();
  });

  it("'block' aborts with the categories; clean input comes back as it was", async () => {
    const abort = vi.fn((reason?: string) => {
      throw new Error(reason);
    }) as unknown as ProcessInputArgs['abort'];
    const processor = new ModerationProcessor({ model: moderator() });
    await expect(processor.processInput(direct([textMessage('u1', 'user', 'I will KILL it')], abort))).rejects.toThrow(/Content flagged for moderation. Categories: violence/);
    const calm = [textMessage('u1', 'user', 'hello')];
    expect(await processor.processInput(direct(calm, abort))).toEqual(calm);
  });
});
