/**
 * A NestJS app streaming an rxagent run over SSE. Offline by default (a scripted model).
 *
 * Run it: `npx tsx --tsconfig examples/nestjs/tsconfig.json examples/nestjs/main.ts`, then
 * `curl -N 'http://127.0.0.1:3212/agent/stream?q=hello'`.
 */
import 'reflect-metadata';
import { pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { Agent } from 'rxagent';
import { scriptedModel } from 'rxagent/testing';
import { AgentModule } from './app.module.js';

/** The demo agent: an offline model that streams a word every `wordDelayMs`. */
export function demoAgent(wordDelayMs = 50): Agent {
  return new Agent({
    id: 'nest-sse',
    model: scriptedModel({ wordDelayMs, rules: [], fallback: ({ userText }) => ({ text: `You asked: ${userText}. Here is a streamed answer.` }) }),
  });
}

/** Creates and starts the app on `host:port` (`port: 0` picks a free port). */
export async function startNestApp(agent: Agent, options: { port?: number; host?: string } = {}): Promise<INestApplication> {
  const app = await NestFactory.create(AgentModule.forAgent(agent), { logger: false });
  await app.listen(options.port ?? 3212, options.host ?? '127.0.0.1');
  return app;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void startNestApp(demoAgent())
    .then((app) => app.getUrl())
    .then((url) => console.log(`NestJS + rxagent: ${url}/agent/stream?q=hello`));
}
