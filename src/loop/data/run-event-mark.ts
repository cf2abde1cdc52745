/**
 * The mark of a run's own values — `RunEnd` after the terminal chunk, and a durable run's commit
 * points — beside its chunks. A symbol: no chunk, whatever a processor made, carries it, so one
 * property read tells a chunk from the run's values.
 */
export const RUN_EVENT: unique symbol = Symbol('rxagent.runEvent');
