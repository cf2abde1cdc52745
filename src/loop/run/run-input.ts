/** The run's input phase: `processInput` once, then the system messages every step starts from. */
import { EMPTY, type Observable, ignoreElements, of, tap } from 'rxjs';
import { processInput } from '../../operators/process-input.js';
import { hasHook } from '../../contract/has-hook.js';
import type { RunEnvironment } from './run-environment.js';
import type { RunState } from '../data/run-state.js';

/**
 * `processInput` once (when hooked: memory loads the thread's history here); then the system
 * messages every step starts from. Emits nothing.
 *
 * ```
 * input:  ---|      (a hook that takes 3 frames; with no processInput hook: |)
 * ```
 */
export function inputPhase(env: RunEnvironment, state: RunState): Observable<never> {
  const capture = (): void => {
    state.initialSystemMessages = state.messageList.getSystemMessages();
  };
  if (!hasHook(env.inputProcessors, 'processInput')) {
    capture();
    return EMPTY;
  }
  return of(state.messageList).pipe(processInput(env.inputProcessors, env.ctx), tap(capture), ignoreElements());
}
