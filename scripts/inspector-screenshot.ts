/**
 * Makes docs/images/inspector.png, the README's picture of the run inspector: the offline demo
 * agent (examples/inspector), three runs (an order lookup through a tool, a refund answer sent
 * back once, a leaked secret that trips the wire), the retried run selected and one marble clicked.
 *
 *   npx tsx scripts/inspector-screenshot.ts [out.png]
 *
 * Needs Chromium (RXAGENT_CHROMIUM, default /usr/bin/chromium; `.ci/chromium.sh` installs it).
 */
import { chromium } from 'playwright-core';
import { inspect } from 'rxagent/devtools';
import { createDemoAgent, DEMO_PROMPTS } from '../examples/inspector/demo-agent.js';

const out = process.argv[2] ?? 'docs/images/inspector.png';
const server = await inspect(createDemoAgent({ wordDelayMs: 15 }), { port: 0, suggestions: DEMO_PROMPTS });
const browser = await chromium.launch({
  executablePath: process.env.RXAGENT_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1360, height: 820 }, deviceScaleFactor: 1 });
  await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
  await page.goto(server.url);
  await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor();
  for (const prompt of ['Where is order 123?', 'What is the admin password?', 'Can I get a refund?']) {
    await page.getByTestId('chat-input').fill(prompt);
    await page.getByTestId('chat-input').press('Enter');
    await page.locator('[data-testid="run-item"][data-status="running"]').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => undefined);
    await page.waitForFunction(() => !(document.getElementById('send') as HTMLButtonElement).disabled);
  }
  await page.locator('[data-testid="marble"][data-outcome="retry"]').first().click();
  await page.getByTestId('details-title').waitFor();
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await server.close();
}
