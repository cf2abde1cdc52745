/** The Nest module: the controller plus the agent it serves, provided under `AGENT`. */
import { Module, type DynamicModule } from '@nestjs/common';
import type { Agent } from 'rxagent';
import { AGENT, AgentController } from './agent.controller.js';

@Module({})
export class AgentModule {
  /** A module serving `agent` at `GET /agent/stream`. */
  static forAgent(agent: Agent): DynamicModule {
    return { module: AgentModule, controllers: [AgentController], providers: [{ provide: AGENT, useValue: agent }] };
  }
}
