/** Type tests of `rxagent/loop`: what a composed loop's pieces give and take. */
import { describe, expectTypeOf, it } from 'vitest';
import { EMPTY, filter, type MonoTypeOperatorFunction, type Observable, type OperatorFunction } from 'rxjs';
import type { Agent, ChunkType } from 'rxagent';
import {
  closeBrackets,
  endWithTerminal,
  isStepEnd,
  orderedMergeMap,
  runCommit,
  runFailed,
  runInput,
  runStep,
  withAgentRun,
  type AgentRun,
  type CommitPosition,
  type StepEnd,
  type StepPosition,
} from 'rxagent/loop';

declare const agent: Agent;
declare const run: AgentRun;

describe('rxagent/loop types', () => {
  it('the phases: input emits nothing, a step emits chunks and its StepEnd, commit and failure chunks', () => {
    expectTypeOf(runInput(run)).toEqualTypeOf<Observable<never>>();
    expectTypeOf(runStep(run, 0)).toEqualTypeOf<Observable<ChunkType | StepEnd>>();
    expectTypeOf(runCommit(run)).toEqualTypeOf<Observable<ChunkType>>();
    expectTypeOf(runFailed(run, new Error('x'))).toEqualTypeOf<Observable<ChunkType>>();
  });

  it('isStepEnd narrows a step’s items both ways', () => {
    const chunks = runStep(run, 0).pipe(filter((item): item is ChunkType => !isStepEnd(item)));
    expectTypeOf(chunks).toEqualTypeOf<Observable<ChunkType>>();
    const ends = runStep(run, 0).pipe(filter(isStepEnd));
    expectTypeOf(ends).toEqualTypeOf<Observable<StepEnd>>();
  });

  it('a StepEnd says where the run goes on: the next step (its number) or the commit', () => {
    expectTypeOf<StepEnd['next']>().toEqualTypeOf<StepPosition | CommitPosition>();
    expectTypeOf<StepPosition['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<StepEnd>().not.toHaveProperty('continues');
  });

  it('withAgentRun emits what its body emits (chunks by default)', () => {
    expectTypeOf(withAgentRun({ agent, input: 'hi' }, () => runCommit(run))).toEqualTypeOf<Observable<ChunkType>>();
    expectTypeOf(withAgentRun({ agent, input: 'hi' }, () => [1, 2])).toEqualTypeOf<Observable<number>>();
    // @ts-expect-error the agent is required
    withAgentRun({ input: 'hi' }, () => EMPTY);
  });

  it('the operators keep chunks; endWithTerminal with then adds its value', () => {
    expectTypeOf(closeBrackets()).toEqualTypeOf<MonoTypeOperatorFunction<ChunkType>>();
    expectTypeOf(endWithTerminal({ runId: 'r' })).toEqualTypeOf<MonoTypeOperatorFunction<ChunkType>>();
    expectTypeOf(endWithTerminal({ runId: 'r', then: () => 42 })).toEqualTypeOf<OperatorFunction<ChunkType, ChunkType | number>>();
    expectTypeOf(orderedMergeMap((value: string) => Promise.resolve(value.length), 2)).toEqualTypeOf<OperatorFunction<string, number>>();
  });
});
