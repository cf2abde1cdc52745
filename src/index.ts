/**
 * rxagent — LLM agents as RxJS pipelines. Every processor hook is an operator
 * (`rxagent/operators`), the agent loop is an Observable (`Agent.stream$`).
 */
export * from './loop/index.js';
export * from './processor/index.js';
export {
  MessageList,
  InvalidMessageError,
  RxAgentError,
  getMessageText,
  type CoreSystemMessage,
  type DataPart,
  type FilePart,
  type InboundMessage,
  type MastraDBMessage,
  type MastraMessageContentV2,
  type MastraMessagePart,
  type MessageSource,
  type ReasoningPart,
  type SourcePart,
  type TextPart,
  type ToolInvocation,
  type ToolInvocationPart,
} from './message-list/index.js';
