/** Tool calls and results as steps, hooks and chunk payloads report them. */

/** A tool call as steps and hooks report it. */
export interface ToolCallInfo {
  /** The id of the model's tool call. */
  toolCallId: string;
  /** The name of the tool. */
  toolName: string;
  /** The tool call's arguments (parsed input). */
  args: unknown;
  /** True when the provider ran the tool itself (provider tools). */
  providerExecuted?: boolean;
}

/** A tool result as steps report it. */
export interface ToolResultInfo {
  /** The id of the model's tool call. */
  toolCallId: string;
  /** The name of the tool. */
  toolName: string;
  /** The tool call's arguments (parsed input). */
  args: unknown;
  /** The tool's result (what the model gets). */
  result: unknown;
  /** True when the tool result is an error. */
  isError?: boolean;
  /** True when the provider ran the tool itself (provider tools). */
  providerExecuted?: boolean;
}
