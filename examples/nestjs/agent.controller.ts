/**
 * A NestJS controller whose `@Sse()` endpoint returns an agent run: `agent.stream$()` mapped to
 * Nest's own `MessageEvent`. Nest subscribes when the client connects and unsubscribes when it
 * disconnects, which aborts the provider request (rxagent runs are cold Observables).
 */
import { Controller, Inject, Query, Sse, type MessageEvent } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { Agent, type ChunkType } from 'rxagent';

/** The injection token of the agent the controller runs. */
export const AGENT = Symbol('rxagent.Agent');

/** One chunk as an SSE message: the chunk type as the event name, its payload as data. */
export function toMessageEvent(chunk: ChunkType, index: number): MessageEvent {
  return { id: String(index), type: chunk.type, data: 'payload' in chunk ? (chunk.payload as object) : { data: chunk.data } };
}

@Controller('agent')
export class AgentController {
  // An explicit token: no reliance on emitDecoratorMetadata for constructor injection.
  constructor(@Inject(AGENT) private readonly agent: Agent) {}

  /** `GET /agent/stream?q=…`: the run's chunks as server-sent events. */
  @Sse('stream')
  stream(@Query('q') question?: string): Observable<MessageEvent> {
    return this.agent.stream$(question ?? 'Hello').pipe(map(toMessageEvent));
  }
}
