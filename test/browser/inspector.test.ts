/**
 * The run inspector in a real browser: Debian's chromium driven by playwright-core (no browser
 * download), on the offline demo agent of `npm run inspect`. Chats through the page and checks the
 * marble timeline: it fills in while the run streams; a refund answer sent back once shows a retry
 * marble, a rejected attempt and a second one; a leaked secret shows the tripwire; the judge and
 * the tool call have their lanes; clicking a marble shows its payload; "Export marbles" gives a
 * snippet whose diagram and values replay the run; the ruler reads as passes with times; held
 * deltas are drawn held while the run streams, never dropped; the chat follows the selected run
 * and the page comes back to it after a reload. Journaled runs made by the real durable worker on
 * PostgreSQL — one taken over after its first owner crashed mid-step, one cancelled — are listed,
 * opened after the fact with the owners lane, the takeover band and no made-up processor lanes,
 * and exported as marbles that replay the journal. Screenshots go to test-artifacts/ (and the
 * journaled one to docs/images/).
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { inspect, type InspectorServer } from 'rxagent/devtools';
import { createTestScheduler } from 'rxagent/testing';
import { lastValueFrom, toArray } from 'rxjs';
import { createDemoAgent, DEMO_PROMPTS } from '../../examples/inspector/demo-agent.js';
import { CURT_REPLY_FEEDBACK } from '../../examples/web-chat/chat-agent.js';
import { evaluateSnippet } from '../devtools/support/evaluate-snippet.js';
import { makeJournaledRuns, type JournaledRuns } from './support/journaled-runs.js';

const executablePath = process.env.RXAGENT_CHROMIUM ?? '/usr/bin/chromium';
const launchArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Replies stream at 40 ms a word (the timeline fills in over ~1 s); leave room on a loaded machine. */
const POLL = { timeout: 15_000, interval: 50 };

let server: InspectorServer;
let browser: Browser;
let page: Page;
let journaled: JournaledRuns;

beforeAll(async () => {
  mkdirSync('test-artifacts', { recursive: true });
  [journaled, browser] = await Promise.all([makeJournaledRuns(), chromium.launch({ executablePath, args: launchArgs })]);
  server = await inspect(createDemoAgent({ wordDelayMs: 40 }), { port: 0, suggestions: DEMO_PROMPTS, journal: journaled.journal });
  page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
  // No network beyond the loopback server.
  await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
  await page.goto(server.url);
  await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: POLL.timeout });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await journaled?.close();
});

async function send(text: string): Promise<void> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
}

const marbles = (selector = '') => page.locator(`[data-testid="marble"]${selector}`);
const status = () => page.getByTestId('run-status').textContent();
const sendReady = () => page.getByTestId('send').isEnabled();

describe('run inspector page', () => {
  it('draws a run with a retry live, lane by lane, and shows a marble payload on click', async () => {
    // Sample (status, marble count) every time the timeline changes while the run streams.
    await page.evaluate(() => {
      const samples: Array<[string, number]> = [];
      (window as unknown as { samples: typeof samples }).samples = samples;
      const batching = '[data-testid="marble"][data-lane="hook:batch-parts:processOutputStream"]';
      const marks = { held: 0, dropped: 0 };
      (window as unknown as { marks: typeof marks }).marks = marks;
      new MutationObserver(() => {
        const running = document.querySelector('[data-testid="run-status"]')?.textContent ?? '';
        samples.push([running, document.querySelectorAll('[data-testid="marble"]').length]);
        if (running !== 'running') return;
        // what the batching processor has not passed on yet, as drawn while the run streams
        marks.held = Math.max(marks.held, document.querySelectorAll(`${batching}[data-outcome="hold"]`).length);
        marks.dropped = Math.max(marks.dropped, document.querySelectorAll(`${batching}[data-outcome="drop"]`).length);
      }).observe(document.getElementById('timeline') as HTMLElement, { childList: true, subtree: true });
    });
    await send('Can I get a refund?');
    await expect.poll(status, POLL).toBe('finish');
    await expect.poll(sendReady, POLL).toBe(true);
    const samples = await page.evaluate(() => (window as unknown as { samples: Array<[string, number]> }).samples);
    const whileRunning = samples.filter(([state, count]) => state === 'running' && count > 0).map(([, count]) => count);
    // marbles were on screen before the run ended, and more came
    expect(whileRunning.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...whileRunning)).toBeGreaterThan(Math.min(...whileRunning));
    expect(await marbles().count()).toBeGreaterThan(Math.max(...whileRunning) - 1);
    // held deltas are drawn held while the run streams, never as dropped
    const marks = await page.evaluate(() => (window as unknown as { marks: { held: number; dropped: number } }).marks);
    expect(marks.held).toBeGreaterThan(0);
    expect(marks.dropped).toBe(0);
    // the ruler reads as what it is: passes, each with the time it began
    expect(await page.getByTestId('ruler-label').textContent()).toBe('pass · ms');
    const ticks = await page.getByTestId('ruler-tick').allTextContents();
    expect(ticks.length).toBeGreaterThan(1);
    for (const tick of ticks) expect(tick).toMatch(/^\d+ · \d+ ms$/);

    // a lane per processor and hook, the judge's lane, the model stream and the run's output
    const lanes = await page.getByTestId('lane').evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.lane));
    expect(lanes).toEqual(
      expect.arrayContaining([
        'hook:moderation:processInput',
        'judge:moderation',
        'model',
        'hook:secret-guard:processOutputStream',
        'hook:regex-filter:processOutputStream',
        'hook:batch-parts:processOutputStream',
        'hook:curt-reply-guard:processOutputStep',
        'output',
      ]),
    );
    expect(lanes.at(-1)).toBe('output');

    // the rejected attempt and the retried one
    const bands = await page.getByTestId('band').evaluateAll((nodes) => nodes.map((node) => [(node as HTMLElement).dataset.kind, node.textContent]));
    expect(bands).toEqual([
      ['retry', 'step 0 · rejected ↻'],
      ['step', 'step 1 · attempt 2'],
    ]);
    // batching holds deltas and releases them merged
    expect(await marbles('[data-lane="hook:batch-parts:processOutputStream"][data-outcome="hold"]').count()).toBeGreaterThan(0);
    expect(await marbles('[data-lane="hook:batch-parts:processOutputStream"][data-outcome="rewrite"]').count()).toBeGreaterThan(0);

    // click the retry marble: its payload, the TripWire with the guard's feedback
    const retry = marbles('[data-outcome="retry"]');
    expect(await retry.count()).toBe(1);
    expect(await retry.getAttribute('data-lane')).toBe('hook:curt-reply-guard:processOutputStep');
    await retry.click();
    await expect.poll(() => page.getByTestId('details-title').textContent(), POLL).toBe('curt-reply-guard · processOutputStep');
    const error = JSON.parse((await page.getByTestId('payload-error').textContent()) ?? '{}') as Record<string, unknown>;
    expect(error).toMatchObject({ name: 'TripWire', reason: CURT_REPLY_FEEDBACK, retry: true, processorId: 'curt-reply-guard' });
    expect(await retry.getAttribute('class')).toContain('selected');

    // the judge call: its prompt holds the user's text
    await marbles('[data-lane="judge:moderation"]').click();
    await expect.poll(() => page.getByTestId('details-title').textContent(), POLL).toBe('moderation · judge call');
    expect(await page.getByTestId('payload-in').textContent()).toContain('Can I get a refund?');
    await page.screenshot({ path: 'test-artifacts/inspector-retry.png' });
  });

  it('shows the tripwire of a leaked secret', async () => {
    await send('What is the admin password?');
    await expect.poll(status, POLL).toBe('tripwire');
    await expect.poll(sendReady, POLL).toBe(true);
    const abort = marbles('[data-lane="hook:secret-guard:processOutputStream"][data-outcome="abort"]');
    expect(await abort.count()).toBe(1);
    expect(await marbles('[data-lane="output"][data-chunk-type="tripwire"]').count()).toBe(1);
    expect(await page.getByTestId('band').evaluateAll((nodes) => nodes.map((node) => node.textContent))).toEqual(['step 0 · tripwire']);
    await abort.click();
    expect(JSON.parse((await page.getByTestId('payload-error').textContent()) ?? '{}')).toMatchObject({ reason: 'The reply contained a secret and was stopped.' });
    // the deltas after the trip never reached the output lane: no marble there shows the secret
    const outputTexts = await marbles('[data-lane="output"]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('title') ?? ''));
    expect(outputTexts.join(' ')).not.toContain('hunter2');
    expect(await page.getByTestId('tripwire-notice').last().textContent()).toContain('secret-guard');
    await page.screenshot({ path: 'test-artifacts/inspector-tripwire.png' });
  });

  it('shows the tool call and its redacted result, and lists every run', async () => {
    await send('Where is order 123?');
    await expect.poll(status, POLL).toBe('finish');
    await expect.poll(sendReady, POLL).toBe(true);
    const tools = await marbles('[data-lane="tools"]').evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.chunkType));
    expect(tools).toEqual(['tool-call', 'tool-result']);
    await marbles('[data-lane="hook:regex-filter:processToolResult"][data-outcome="rewrite"]').click();
    expect(await page.getByTestId('payload-in').textContent()).toContain('jane.doe@example.com');
    expect(await page.getByTestId('payload-out').textContent()).toContain('[EMAIL]');
    const runs = await page.getByTestId('run-item').evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.status));
    expect(runs).toEqual(['finish', 'tripwire', 'finish']);
  });

  it('exports a finished run as a marble diagram that replays it', async () => {
    await page.locator('[data-testid="run-item"]').nth(2).click(); // the refund run
    await expect.poll(() => page.locator('#run-header h2').textContent(), POLL).toBe('Can I get a refund?');
    await page.getByTestId('export-marbles').click();
    const code = page.getByTestId('export-code');
    await code.waitFor({ state: 'visible' });
    const text = (await code.textContent()) ?? '';
    expect(text).toContain("import { createChunkBuilders, testUsage } from 'rxagent/testing';");
    await page.screenshot({ path: 'test-artifacts/inspector-export.png' });
    // the snippet, as copied from the page, replays the run's chunks in order
    const { diagram, values } = evaluateSnippet(text);
    const replayed: string[] = [];
    createTestScheduler().run(({ cold, flush }) => {
      cold(diagram, values).subscribe((emitted) => replayed.push((emitted as { type: string }).type));
      flush();
    });
    const runId = /createChunkBuilders\('([^']+)'\)/.exec(text)?.[1] ?? '';
    const record = server.inspector.run(runId);
    expect(replayed).toEqual(record.events.flatMap((event) => (event.type === 'chunk' ? [event.chunkType] : [])));
    expect(replayed.filter((type) => type === 'step-finish')).toHaveLength(2);
    // as a ready-to-run it() test
    await page.getByTestId('export-as-test').check();
    await expect.poll(() => code.textContent(), POLL).toContain(`it('replays run ${runId} as recorded', () => {`);
    await page.locator('#close-export').click();
  });

  it('the chat follows the selected run, and the page comes back to it after a reload', async () => {
    const chatOf = () => page.getByTestId('messages').innerText();
    // the refund run is selected (previous test): its conversation, the accepted answer only
    await expect.poll(chatOf, POLL).toContain('Can I get a refund?');
    expect(await chatOf()).toContain('Sorry for the short answer!');
    expect(await chatOf()).not.toContain('Where is order 123?');
    expect(await chatOf()).not.toContain('Absolutely not'); // the rejected attempt
    await page.locator('[data-testid="run-item"]').nth(0).click(); // the order run
    // its conversation: what the page sent with it (the turns before it, too) and its answer
    await expect.poll(chatOf, POLL).toContain('Order 123 is shipped');
    const selectedRun = await page.locator('[data-testid="run-item"].selected').getAttribute('data-run-id');
    expect(page.url()).toContain(`#run=${selectedRun}`);
    await page.reload();
    await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: POLL.timeout });
    await expect.poll(() => page.locator('#run-header h2').textContent(), POLL).toBe('Where is order 123?');
    await expect.poll(chatOf, POLL).toContain('Where is order 123?');
    expect(await chatOf()).toContain('[EMAIL]');
  });

  it('opens a journaled run that was taken over, after the fact, and exports it', async () => {
    const item = page.locator(`[data-testid="journal-item"][data-run-id="${journaled.takenOver}"]`);
    await item.waitFor({ timeout: POLL.timeout });
    expect(await item.getAttribute('data-epoch')).toBe('2');
    expect(await page.locator(`[data-testid="journal-item"][data-run-id="${journaled.cancelled}"]`).getAttribute('data-status')).toBe('cancelled');
    await item.click();
    await page.getByTestId('journal-note').waitFor({ timeout: POLL.timeout });
    await expect.poll(status, POLL).toBe('finish');
    expect(await page.getByTestId('run-header').textContent()).toContain('epoch 2');
    // the journal keeps chunks only: an owners lane and the run's output, no processor lanes made up
    const lanes = await page.getByTestId('lane').evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.lane));
    expect(lanes).toEqual(['owners', 'output']);
    expect(await marbles('[data-lane="owners"][data-outcome="takeover"]').count()).toBe(1);
    const bands = await page.getByTestId('band').evaluateAll((nodes) => nodes.map((node) => [(node as HTMLElement).dataset.kind, node.textContent]));
    expect(bands).toEqual([
      ['takeover', 'step 0 · taken over (epoch 2)'],
      ['step', 'step 0 · attempt 2'],
    ]);
    expect(await page.getByTestId('ruler-label').textContent()).toBe('entry');
    const entries = await lastValueFrom(journaled.journal.read$(journaled.takenOver, { live: false }).pipe(toArray()));
    expect(await marbles('[data-lane="output"]').count()).toBe(entries.length);
    // the chat follows it: the answer the takeover completed (the dead attempt's words left out)
    await expect.poll(() => page.getByTestId('messages').innerText(), POLL).toContain('Your parcel left the warehouse this morning and should arrive on Thursday.');
    await page.screenshot({ path: 'docs/images/inspector-journal.png' });
    // exported: the snippet replays the journal's chunks, in order
    await page.getByTestId('export-as-test').uncheck();
    await page.getByTestId('export-marbles').click();
    const code = page.getByTestId('export-code');
    await expect.poll(() => code.textContent(), POLL).toContain(`createChunkBuilders('${journaled.takenOver}')`);
    const { diagram, values } = evaluateSnippet((await code.textContent()) ?? '');
    const replayed: unknown[] = [];
    createTestScheduler().run(({ cold, flush }) => {
      cold(diagram, values).subscribe((emitted) => replayed.push(emitted));
      flush();
    });
    expect(replayed).toEqual(entries.map((entry) => entry.chunk));
    await page.locator('#close-export').click();
    // the cancelled one: ended by its abort chunk
    await page.locator(`[data-testid="journal-item"][data-run-id="${journaled.cancelled}"]`).click();
    await expect.poll(() => page.getByTestId('run-header').textContent(), POLL).toContain('journal: cancelled');
    expect(await status()).toBe('abort');
  });
});
