import type { MastraDBMessage, MastraMessageContentV2, MastraMessageRole } from '../../message-list/types.js';
import type { StorageResource, StorageThread } from '../types.js';

/** A stored message as the SQL stores read it back (content still JSON text). */
export interface MessageRecord {
  id: string;
  threadId: string;
  resourceId: string;
  role: string;
  type: string | null;
  content: string;
  createdAt: number;
  /** The run that stored it (`SaveMessagesOptions.runId`), `null` for none; never read back into the message. */
  runId?: string | null;
}

/** Rebuilds a `MastraDBMessage` from its stored columns. */
export function toMessage(record: MessageRecord): MastraDBMessage {
  return {
    id: record.id,
    role: record.role as MastraMessageRole,
    createdAt: new Date(record.createdAt),
    threadId: record.threadId,
    resourceId: record.resourceId,
    ...(record.type === null ? {} : { type: record.type }),
    content: JSON.parse(record.content) as MastraMessageContentV2,
  };
}

/** A stored thread's columns (metadata still JSON text). */
export interface ThreadRecord {
  id: string;
  resourceId: string;
  title: string | null;
  metadata: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Rebuilds a `StorageThread` from its stored columns. */
export function toThread(record: ThreadRecord): StorageThread {
  return {
    id: record.id,
    resourceId: record.resourceId,
    ...(record.title === null ? {} : { title: record.title }),
    ...(record.metadata === null ? {} : { metadata: JSON.parse(record.metadata) as Record<string, unknown> }),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

/** A stored resource's columns (metadata still JSON text). */
export interface ResourceRecord {
  id: string;
  workingMemory: string | null;
  metadata: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Rebuilds a `StorageResource` from its stored columns. */
export function toResource(record: ResourceRecord): StorageResource {
  return {
    id: record.id,
    ...(record.workingMemory === null ? {} : { workingMemory: record.workingMemory }),
    ...(record.metadata === null ? {} : { metadata: JSON.parse(record.metadata) as Record<string, unknown> }),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

/** Metadata as JSON text, `null` when absent. */
export function metadataJson(metadata: Record<string, unknown> | undefined): string | null {
  return metadata === undefined ? null : JSON.stringify(metadata);
}
