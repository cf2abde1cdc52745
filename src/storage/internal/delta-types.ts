/**
 * The chunk types that carry a part's content piece by piece (`text-delta`, `reasoning-delta`,
 * `tool-call-delta`): most of a long step's rows. Everything else is a run's **structure**
 * (steps, part starts and ends, tool calls and results, data chunks): what a takeover or a UI
 * resume needs to know where a step stands, read without the deltas (`RunJournal.readStructure`).
 */
export const DELTA_TYPES: readonly string[] = ['text-delta', 'reasoning-delta', 'tool-call-delta'];

const deltas: ReadonlySet<string> = new Set(DELTA_TYPES);

/** Whether a chunk type is a delta (see {@link DELTA_TYPES}). */
export const isDeltaType = (type: string): boolean => deltas.has(type);
