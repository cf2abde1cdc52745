/** Rows of the memory tables (threads, messages, resources) and their conversion to records. */
import type { MastraDBMessage } from '../../message-list/types.js';
import { toMessage, toResource, toThread } from '../internal/records.js';
import type { StorageResource, StorageThread } from '../types.js';

export interface ThreadRow {
  id: string;
  resource_id: string;
  title: string | null;
  metadata: string | null;
  created_ms: number;
  updated_ms: number;
}

export interface MessageRow {
  id: string;
  thread_id: string;
  resource_id: string;
  role: string;
  type: string | null;
  content: string;
  created_ms: number;
}

export interface ResourceRow {
  id: string;
  working_memory: string | null;
  metadata: string | null;
  created_ms: number;
  updated_ms: number;
}

// Columns read as text / epoch milliseconds, so a pool with custom type parsers reads the same.
export const epochMs = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`;
export const threadColumns = `id, resource_id, title, metadata::text AS metadata, ${epochMs('created_at')} AS created_ms, ${epochMs('updated_at')} AS updated_ms`;
export const messageColumns = `id, thread_id, resource_id, role, type, content::text AS content, ${epochMs('created_at')} AS created_ms, seq`;
export const resourceColumns = `id, working_memory, metadata::text AS metadata, ${epochMs('created_at')} AS created_ms, ${epochMs('updated_at')} AS updated_ms`;

export function threadFromRow(row: ThreadRow): StorageThread {
  return toThread({
    id: row.id,
    resourceId: row.resource_id,
    title: row.title,
    metadata: row.metadata,
    createdAt: Math.round(Number(row.created_ms)),
    updatedAt: Math.round(Number(row.updated_ms)),
  });
}

export function messageFromRow(row: MessageRow): MastraDBMessage {
  return toMessage({
    id: row.id,
    threadId: row.thread_id,
    resourceId: row.resource_id,
    role: row.role,
    type: row.type,
    content: row.content,
    createdAt: Math.round(Number(row.created_ms)),
  });
}

export function resourceFromRow(row: ResourceRow): StorageResource {
  return toResource({
    id: row.id,
    workingMemory: row.working_memory,
    metadata: row.metadata,
    createdAt: Math.round(Number(row.created_ms)),
    updatedAt: Math.round(Number(row.updated_ms)),
  });
}
