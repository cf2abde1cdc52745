// rxagent/devtools from the built package, ESM and CJS: inspect() finds the page's files next to
// the built entry (dist/inspector-page/, copied by the build) and serves them; a chat runs a
// traced run whose marble export ends the diagram.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Agent } = await import('rxagent');
const { scriptedModel } = await import('rxagent/testing');
const builds = { esm: await import('rxagent/devtools'), cjs: require('rxagent/devtools') };
for (const [format, devtools] of Object.entries(builds)) {
  const agent = new Agent({ id: `smoke-${format}`, model: scriptedModel({ rules: [], fallback: { text: 'Hello there' } }) });
  const server = await devtools.inspect(agent, { port: 0 });
  try {
    for (const path of ['/', '/inspector.js', '/timeline.js', '/chat.js', '/inspector.css']) {
      const response = await fetch(new URL(path, server.url));
      if (response.status !== 200 || (await response.text()).length < 100) throw new Error(`smoke devtools (${format}): GET ${path} → ${response.status}`);
    }
    const answer = await fetch(new URL('/api/chat', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }] }),
    });
    await answer.text();
    const [run] = server.inspector.runs();
    const { diagram } = server.inspector.exportMarbles(run.runId);
    if (run.status !== 'finish' || !diagram.endsWith('|)')) throw new Error(`smoke devtools (${format}): run ${run.status}, diagram ${diagram}`);
  } finally {
    await server.close();
  }
}
console.log('smoke devtools: ok (esm + cjs serve the page and record a run)');
