import { RxAgentError, hasMarker } from '../contract/index.js';
import type { ConformanceReport } from './conformance-types.js';

const marker = Symbol.for('rxagent.error.ConformanceError');

/**
 * A processor failed the conformance check (`expectConformance`): its output, the messages saved
 * or its `state` differ between a live run and the same conversation retried, restored or taken
 * over. The message is the report's text (each cause, where, and a line diff); `report` holds
 * the findings as data.
 *
 * @example
 * ```ts
 * import { ConformanceError, expectConformance } from 'rxagent/testing';
 * try { await expectConformance(myProcessor); }
 * catch (error) { if (ConformanceError.isInstance(error)) console.log(error.report.findings.map((finding) => finding.cause)); }
 * ```
 */
export class ConformanceError extends RxAgentError {
  private readonly [marker] = true;
  /** The report of the check that failed. */
  readonly report: ConformanceReport;

  constructor(report: ConformanceReport) {
    super('ConformanceError', report.text);
    this.report = report;
  }

  static override isInstance(error: unknown): error is ConformanceError {
    return hasMarker(error, marker);
  }
}
