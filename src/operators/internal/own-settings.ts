/** Copies of the agent's call settings a hook may edit in place without reaching later runs. */
import type { CallSettings } from '../../contract/processor-types.js';

/**
 * A copy of `settings` that shares nothing editable with it (`headers` and `stopSequences` copied
 * too): the step's settings may be the agent's configuration, shared by all its runs.
 *
 * @example
 * ```ts
 * const own = ownModelSettings(agentSettings); own.headers!['x-a'] = '1'; // agentSettings.headers unchanged
 * ```
 */
export function ownModelSettings(settings: CallSettings): CallSettings {
  const own: CallSettings = { ...settings };
  if (settings.headers !== undefined) own.headers = { ...settings.headers };
  if (settings.stopSequences !== undefined) own.stopSequences = [...settings.stopSequences];
  return own;
}
