/**
 * The rule `submit()` applies to an agent's processors (input, output, error; dynamic lists
 * resolved with the call's request context): each must say it can run durably. Refused, with a
 * `NotDurableError` naming the processor and why: `durableState: false`, `{ notDurable: why }`
 * (a built-in configured in a way another worker could not repeat, e.g. `PIIDetector`'s `'hash'`
 * redaction without a `hashKey`), and a `durableState` that is none of the documented forms.
 * A state that is not JSON can only be seen at a commit: that ends the run with a
 * `DurableStateError` naming processor and path (see docs/durable.md).
 */
import type { Processor } from '../../contract/index.js';
import { NotDurableError } from '../errors/not-durable-error.js';

const FORMS = "'json', 'reset', false, { notDurable: 'why' } or { snapshot, restore }";

/** Throws `NotDurableError` when `processor` cannot run in a durable run. */
export function assertDurableProcessor(processor: Processor): void {
  const what = `processor "${processor.id}"`;
  const durable: unknown = (processor as { durableState?: unknown }).durableState;
  if (durable === undefined || durable === 'json' || durable === 'reset') return;
  if (durable === false) throw new NotDurableError({ what, message: 'its state cannot be kept across workers (durableState: false)' });
  if (typeof durable === 'object' && durable !== null) {
    const form = durable as { notDurable?: unknown; snapshot?: unknown; restore?: unknown };
    if (typeof form.notDurable === 'string') throw new NotDurableError({ what, message: form.notDurable });
    if (typeof form.snapshot === 'function' && typeof form.restore === 'function') return;
  }
  throw new NotDurableError({ what, message: `its durableState is not one of ${FORMS} (got ${describe(durable)})` });
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return `an object with ${Object.keys(value).map((key) => JSON.stringify(key)).join(', ') || 'no keys'}`;
  return String(value);
}
