// The reference implementation's entry points, resolved from bench/peer/node_modules (loaded by
// bench/lib/reference-subject.ts after bench/lib/peer.ts installed them).
export { Agent } from '@mastra/core/agent';
export { createTool } from '@mastra/core/tools';
export { z } from 'zod';
export const version = (await import('@mastra/core/package.json', { with: { type: 'json' } })).default.version;
