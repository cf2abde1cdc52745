/** The conformance report as text: a summary line, then each cause — what it means, where it showed, a diff. */
import type { ConformanceCause, ConformanceFinding, ConformanceMode } from '../conformance-types.js';

/** What each cause means and what to do about it. */
const CAUSES: Record<ConformanceCause, { title: string; advice: string }> = {
  'state-outside-state': {
    title: 'state kept outside `state`',
    advice:
      'Per-run data belongs in the hook\'s `state` argument (one plain object per processor per run, saved at every commit point and restored after a crash). ' +
      'Instance fields, closures and module variables outlive the run, are shared by every run of the agent, and are not restored.',
  },
  'state-not-json': {
    title: 'state that is not JSON',
    advice:
      '`state` is saved as JSON at every commit point: keep plain objects, arrays, strings, finite numbers, booleans and null ' +
      '(`[...map]`, `[...set]`, `date.toISOString()`), or give the processor `durableState: { snapshot, restore }`.',
  },
  'not-idempotent-on-replay': {
    title: 'a hook that is not idempotent across a replay',
    advice:
      'A hook ran again over the same input (a rejected attempt retried, a step replayed after a restore or a takeover) and answered differently: ' +
      'what it counted or recorded in the first pass leaked into the second. Key per-attempt data on `retryCount` (or reset it at `step-start`), ' +
      'and derive output from the hook\'s arguments and `state` only.',
  },
};

const ORDER: ConformanceCause[] = ['state-not-json', 'state-outside-state', 'not-idempotent-on-replay'];

/** How many findings of one cause are shown with their diff (the others by where they showed). */
const SHOWN_WITH_DIFF = 2;

/** The report's text. */
export function reportText(options: {
  processorId: string;
  findings: readonly ConformanceFinding[];
  conversations: readonly string[];
  modes: readonly ConformanceMode[];
  runs: number;
  skipped: readonly string[];
}): string {
  const { processorId, findings, conversations, modes, runs, skipped } = options;
  const failedModes = new Set(findings.map((finding) => finding.mode));
  const lines: string[] = [];
  const scope = `${conversations.length} conversation${conversations.length === 1 ? '' : 's'} × ${modes.join(', ')}; ${runs} runs`;
  if (findings.length === 0) {
    lines.push(`processor "${processorId}" conforms: the same output, messages and state live, retried, restored and taken over (${scope})`);
  } else {
    lines.push(`processor "${processorId}" does not conform: ${findings.length} difference${findings.length === 1 ? '' : 's'} in ${[...failedModes].join(', ')} (${scope})`);
  }
  for (const note of skipped) lines.push(`  skipped: ${note}`);
  for (const cause of ORDER) {
    const ofCause = findings.filter((finding) => finding.cause === cause);
    if (ofCause.length === 0) continue;
    lines.push('', `✗ ${CAUSES[cause].title} (${ofCause.length})`, `  ${CAUSES[cause].advice}`);
    ofCause.slice(0, SHOWN_WITH_DIFF).forEach((finding) => {
      const compared = finding.compared === 'fields' || finding.compared === 'snapshot' ? '' : `: ${finding.compared} differ (${finding.mode === 'live' ? '- first run, + second run' : `- live, + ${finding.mode}`})`;
      lines.push(`  • "${finding.conversation}", ${finding.mode}, ${finding.where}${compared}`);
      for (const line of finding.diff) lines.push(`      ${line}`);
    });
    const rest = ofCause.slice(SHOWN_WITH_DIFF);
    if (rest.length > 0) {
      const listed = rest.slice(0, 6).map((finding) => `"${finding.conversation}" ${finding.mode} ${finding.where} (${finding.compared})`);
      lines.push(`  • also: ${listed.join('; ')}${rest.length > listed.length ? `; and ${rest.length - listed.length} more` : ''}`);
    }
  }
  return lines.join('\n');
}
