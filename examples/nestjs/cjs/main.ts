/**
 * The same Nest app from a CommonJS project (this folder's package.json says `"type": "commonjs"`,
 * as a `nest new` project does): the imports below compile to `require()`, and Node >= 22.12
 * loads the ESM-only `ai`/Nest 12 packages through `require(esm)`.
 *
 * Run it: `npx tsx --tsconfig examples/nestjs/cjs/tsconfig.json examples/nestjs/cjs/main.ts`.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { demoAgent } from '../main.js';
import { AgentModule } from '../app.module.js';

async function main(): Promise<void> {
  const app = await NestFactory.create(AgentModule.forAgent(demoAgent(Number(process.env.WORD_DELAY_MS ?? 50))), { logger: false });
  await app.listen(Number(process.env.PORT ?? 3213), '127.0.0.1');
  const url = `${await app.getUrl()}/agent/stream?q=hello`;
  console.log(`module system: ${typeof require === 'function' && typeof module === 'object' ? 'commonjs' : 'esm'}`);
  console.log(`NestJS (CommonJS) + rxagent: ${url}`);
  if (process.env.ONE_REQUEST) {
    console.log(await (await fetch(url)).text());
    await app.close();
  }
}

void main();
