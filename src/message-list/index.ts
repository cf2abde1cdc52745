/**
 * `rxagent/message-list`: the MessageList, the stored message types, format converters
 * (UI ↔ stored ↔ model ↔ provider prompt) and the zod schemas for inbound messages.
 */
export { MessageList } from './message-list.js';
export type { AddMessageOptions, MessageListAllView, MessageListOptions, MessageListView, MessageListViews } from './message-list.js';
export type { StepBoundary } from './step-boundary.js';
export type { ConversationSource, SerializedMessage, SerializedMessageList } from './serialized-message-list.js';

export type {
  CoreSystemMessage,
  DataPart,
  FilePart,
  InboundMessage,
  MastraDBMessage,
  MastraMessageContentV2,
  MastraMessagePart,
  MastraMessageRole,
  MessageSource,
  ReasoningDetail,
  ReasoningPart,
  SourcePart,
  StepStartPart,
  TextPart,
  ToolInvocation,
  ToolInvocationPart,
  ToolInvocationState,
} from './types.js';

export { InvalidMessageError } from './errors/invalid-message-error.js';
export type { MessageIssue } from './errors/invalid-message-error.js';

export { fromUIMessage } from './from-ui.js';
export { toUIMessage } from './to-ui.js';
export { fromModelMessage } from './from-model.js';
export { toModelMessages } from './to-model.js';
export { toPrompt, toPromptMessage } from './to-prompt.js';
export type { ToPromptInput } from './to-prompt.js';
export type { ConversionOptions } from './conversion-options.js';
export { getMessageText } from './get-message-text.js';
export { toCoreSystemMessages } from './system-messages.js';
export type { SystemMessageInput } from './system-messages.js';

export { dbMessageSchema } from './schemas/db-message-schema.js';
export { modelMessageSchema, systemModelMessageSchema, toolResultOutputSchema } from './schemas/model-message-schema.js';
export { uiMessageSchema } from './schemas/ui-message-schema.js';
export { detectInboundFormat, inboundMessageSchema } from './schemas/inbound-message-schema.js';
export type { InboundFormat } from './schemas/inbound-message-schema.js';
