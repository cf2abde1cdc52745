/** The writes of one `saveMessages` inside its libSQL transaction (validated messages, owner checked). */
import type { Transaction } from '@libsql/client';
import { ThreadNotFoundError } from '../errors/thread-not-found-error.js';
import { ThreadOwnershipError } from '../errors/thread-ownership-error.js';
import { messageIdTakenError, messageInOtherThreadError, serialiseContent, type SavePolicy } from '../internal/validate-messages.js';
import type { SaveMessagesOptions } from '../types.js';
import { text, threadColumns } from './libsql-rows.js';

/**
 * Creates the thread when asked, checks its owner, upserts every message (keeping a message in
 * its thread; with `replaceable` or a writer, replacing a stored one only when listed, stored by
 * the writer, or unchanged), drops the writer's messages `supersedes` names and touches the thread.
 * A failure leaves the transaction to be rolled back.
 */
export async function writeMessages(
  transaction: Transaction,
  options: SaveMessagesOptions,
  now: number,
  { replaceable, writer, supersedes }: SavePolicy,
): Promise<void> {
  const { threadId, resourceId } = options;
  if (options.ensureThread === true) {
    await transaction.execute({
      sql: `INSERT INTO rxagent_threads (${threadColumns}) VALUES (?, ?, NULL, NULL, ?, ?) ON CONFLICT (id) DO NOTHING`,
      args: [threadId, resourceId, now, now],
    });
  }
  const owner = await transaction.execute({ sql: 'SELECT resource_id FROM rxagent_threads WHERE id = ?', args: [threadId] });
  const ownerRow = owner.rows[0];
  if (ownerRow === undefined) throw new ThreadNotFoundError({ threadId });
  if (text(ownerRow, 'resource_id') !== resourceId) throw new ThreadOwnershipError({ threadId, resourceId });
  for (const [index, message] of options.messages.entries()) {
    // Serialised here, statement by statement: a failure rolls back what came before.
    // a stored message of the thread is replaced when the save may replace it, when the saving run
    // stored it, or is unchanged; a replaced message stays the run's that stored it first
    const mayReplace = replaceable === undefined || replaceable.has(message.id) ? 1 : 0;
    const result = await transaction.execute({
      sql: `INSERT INTO rxagent_messages AS stored (id, thread_id, resource_id, role, type, content, created_at, run_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET role = excluded.role, type = excluded.type,
              content = excluded.content, created_at = excluded.created_at
            WHERE stored.thread_id = excluded.thread_id
              AND (? = 1 OR stored.run_id = excluded.run_id OR (stored.role = excluded.role AND stored.type IS excluded.type
                AND stored.content = excluded.content AND stored.created_at = excluded.created_at))`,
      args: [message.id, threadId, resourceId, message.role, message.type ?? null, serialiseContent(message, index), message.createdAt.getTime(), writer ?? null, mayReplace],
    });
    if (result.rowsAffected === 0) {
      const stored = await transaction.execute({ sql: 'SELECT thread_id FROM rxagent_messages WHERE id = ?', args: [message.id] });
      const storedRow = stored.rows[0];
      throw storedRow !== undefined && text(storedRow, 'thread_id') === threadId ? messageIdTakenError(index, message.id, threadId, writer) : messageInOtherThreadError(index, message.id);
    }
  }
  if (supersedes !== undefined) {
    // what only an earlier owner of the run's commit stored: the run's own, under its commit's prefix, not saved now
    await transaction.execute({
      sql: `DELETE FROM rxagent_messages
            WHERE thread_id = ? AND run_id = ? AND substr(id, 1, length(?)) = ? AND id NOT IN (SELECT value FROM json_each(?))`,
      args: [threadId, supersedes.runId, supersedes.idPrefix, supersedes.idPrefix, JSON.stringify([...supersedes.kept])],
    });
  }
  await transaction.execute({ sql: 'UPDATE rxagent_threads SET updated_at = ? WHERE id = ?', args: [now, threadId] });
}
