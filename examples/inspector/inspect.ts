/**
 * `npm run inspect`: the run inspector on the offline demo agent (no API key). Open the printed
 * address, chat, and watch each run as a marble timeline: processor hooks, chunks in and out,
 * the moderation judge's call, the tool call, the retry of a curt reply, the tripwire on a secret.
 *
 * PORT / HOST choose where it listens (127.0.0.1:3211; PORT=0 for any free port).
 */
import { inspect } from 'rxagent/devtools';
import { createDemoAgent, DEMO_PROMPTS } from './demo-agent.js';

const server = await inspect(createDemoAgent(), {
  port: process.env.PORT === undefined ? 3211 : Number(process.env.PORT),
  host: process.env.HOST ?? '127.0.0.1',
  suggestions: DEMO_PROMPTS,
});
console.log(`rxagent inspector: ${server.url}  (offline demo agent; Ctrl+C to stop)`);
console.log(`Try: ${DEMO_PROMPTS.map((prompt) => JSON.stringify(prompt)).join(', ')}`);
const stop = (): void => void server.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
