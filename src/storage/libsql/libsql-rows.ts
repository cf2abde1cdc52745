/** Rows of the libSQL memory tables and their conversion to records. */
import type { Row } from '@libsql/client';
import type { MastraDBMessage } from '../../message-list/types.js';
import { toMessage, toResource, toThread } from '../internal/records.js';
import type { StorageResource, StorageThread } from '../types.js';

export const threadColumns = 'id, resource_id, title, metadata, created_at, updated_at';
export const messageColumns = 'id, thread_id, resource_id, role, type, content, created_at, seq';
export const resourceColumns = 'id, working_memory, metadata, created_at, updated_at';

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new Error(`column ${column}: expected text, got ${typeof value}`);
  return value;
}

export function textOrNull(row: Row, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : text(row, column);
}

export function integer(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number' && typeof value !== 'bigint') throw new Error(`column ${column}: expected integer, got ${typeof value}`);
  return Number(value);
}

export function threadFromRow(row: Row): StorageThread {
  return toThread({
    id: text(row, 'id'),
    resourceId: text(row, 'resource_id'),
    title: textOrNull(row, 'title'),
    metadata: textOrNull(row, 'metadata'),
    createdAt: integer(row, 'created_at'),
    updatedAt: integer(row, 'updated_at'),
  });
}

export function messageFromRow(row: Row): MastraDBMessage {
  return toMessage({
    id: text(row, 'id'),
    threadId: text(row, 'thread_id'),
    resourceId: text(row, 'resource_id'),
    role: text(row, 'role'),
    type: textOrNull(row, 'type'),
    content: text(row, 'content'),
    createdAt: integer(row, 'created_at'),
  });
}

export function resourceFromRow(row: Row): StorageResource {
  return toResource({
    id: text(row, 'id'),
    workingMemory: textOrNull(row, 'working_memory'),
    metadata: textOrNull(row, 'metadata'),
    createdAt: integer(row, 'created_at'),
    updatedAt: integer(row, 'updated_at'),
  });
}
