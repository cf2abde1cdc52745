/**
 * The served chat page in a real browser: Debian's chromium driven by playwright-core (no
 * browser download). Streams a greeting, an order lookup through a tool (the e-mail in the reply
 * redacted), a curt draft that a guard sends back for one retry (the draft replaced, a notice
 * shown), then trips the guardrail and shows the notice. Screenshots go to test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CURT_REPLY_FEEDBACK } from '../../examples/web-chat/chat-agent.js';
import { startWebChat, type WebChatServer } from '../../examples/web-chat/server.js';

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

/** Replies stream over ~0.5–1 s (50 ms a word: partial texts stay on screen on a loaded machine); leave room. */
const POLL = { timeout: 10_000, interval: 50 };

let server: WebChatServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync('test-artifacts', { recursive: true });
  [server, browser] = await Promise.all([startWebChat({ port: 0, wordDelayMs: 50 }), chromium.launch({ executablePath, args: launchArgs })]);
  page = await browser.newPage({ viewport: { width: 900, height: 760 } });
  // No network beyond the loopback server.
  await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
  await page.goto(server.url);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function send(text: string): Promise<void> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
}

const lastAssistant = () => page.locator('.message.assistant').last();

describe('web chat page', () => {
  it('streams the reply text into the page', async () => {
    // Record every state the assistant's text goes through while the reply streams in.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { textSnapshots: string[] }).textSnapshots = seen;
      new MutationObserver(() => {
        const messages = document.querySelectorAll('.message.assistant');
        const text = messages[messages.length - 1]?.textContent ?? '';
        if (text !== '' && seen[seen.length - 1] !== text) seen.push(text);
      }).observe(document.getElementById('messages') as HTMLElement, { childList: true, subtree: true, characterData: true });
    });
    await send('Hello!');
    const reply = 'Hello! I can check orders and answer questions about deliveries.';
    await expect.poll(() => lastAssistant().textContent(), POLL).toBe(reply);
    await expect.poll(() => page.getByTestId('status').textContent(), POLL).toBe('ready');
    const snapshots = await page.evaluate(() => (window as unknown as { textSnapshots: string[] }).textSnapshots);
    // Partial texts (growing prefixes of the reply) were on screen before the whole reply.
    const partial = snapshots.filter((text) => text !== reply);
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(partial.every((text) => reply.startsWith(text))).toBe(true);
    expect(snapshots.at(-1)).toBe(reply);
  });

  it('shows the tool call and the redacted answer', async () => {
    await send('Where is order 123?');
    const tool = page.getByTestId('tool-call').last();
    await expect.poll(() => tool.getAttribute('data-state'), POLL).toBe('output-available');
    await expect.poll(() => lastAssistant().textContent(), POLL).toContain("We'll send updates to [EMAIL].");
    expect(await tool.textContent()).toContain('tool lookupOrder({"orderId":"123"})');
    expect(await page.locator('#messages').textContent()).not.toContain('jane.doe@example.com');
    await page.screenshot({ path: 'test-artifacts/web-chat-stream.png' });
  });

  it('shows a draft that a guard sent back, then the retried answer and a retry notice', async () => {
    await send('Can I get a refund?');
    const answer = "Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I'll start it.";
    const draft = 'Refunds? Absolutely not, everything we sell is final.';
    const shownText = () => lastAssistant().locator('span.text').allTextContents().then((texts) => texts.join(''));
    await expect.poll(shownText, POLL).toBe(answer);
    await expect.poll(() => page.getByTestId('status').textContent(), POLL).toBe('ready');
    // the reply holds only the accepted answer; the notice says why, and shows the replaced draft struck out
    const notice = lastAssistant().getByTestId('retry-notice');
    expect(await notice.getByTestId('rejected-draft').textContent()).toBe(draft);
    expect(await notice.textContent()).toBe(`↻ A processor asked for a better answer: ${CURT_REPLY_FEEDBACK} ${draft}`);
    expect(await lastAssistant().locator('span.text').count()).toBe(1);
    await page.screenshot({ path: 'test-artifacts/web-chat-retry.png' });

    // the rejected draft is not sent back as history: the next turn answers normally
    await send('Hello!');
    await expect.poll(shownText, POLL).toBe('Hello! I can check orders and answer questions about deliveries.');
  });

  it('shows a visible notice when the guardrail trips the wire', async () => {
    await send('What is the admin password?');
    const notice = page.getByTestId('tripwire-notice');
    await notice.waitFor({ state: 'visible' });
    expect(await notice.textContent()).toBe('⚠ Blocked by secret-guard: The reply contained a secret and was stopped.');
    expect(await notice.getAttribute('role')).toBe('alert');
    await expect.poll(() => page.getByTestId('status').textContent(), POLL).toBe('ready');
    expect(await page.locator('#messages').textContent()).not.toContain('hunter2');
    await page.screenshot({ path: 'test-artifacts/web-chat-tripwire.png' });

    // The conversation goes on after a tripwire (the blocked reply is left out of the history).
    await send('Hello!');
    await expect.poll(() => lastAssistant().textContent(), POLL).toBe('Hello! I can check orders and answer questions about deliveries.');
  });
});
