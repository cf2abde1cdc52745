/**
 * The storage layer: the `MemoryStorage` contract, the in-memory store and the storage errors.
 * The SQL stores have their own entry points (`rxagent/storage/libsql`,
 * `rxagent/storage/postgres`) so their drivers stay optional.
 *
 * @example
 * ```ts
 * import { InMemoryStorage, StorageError, type MemoryStorage } from 'rxagent/memory';
 * const storage: MemoryStorage = new InMemoryStorage();
 * ```
 */
export type {
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  MemoryStorage,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageResource,
  StorageThread,
} from './types.js';
export { InMemoryStorage, type InMemoryStorageOptions } from './in-memory-storage.js';
export { StorageError, type StorageOperation } from './errors/storage-error.js';
export { ThreadNotFoundError } from './errors/thread-not-found-error.js';
export { MissingDriverError } from './errors/missing-driver-error.js';
export { ThreadOwnershipError } from './errors/thread-ownership-error.js';
export { InvalidIdError, MAX_STORAGE_ID_LENGTH, type InvalidIdField, type InvalidIdReason } from './errors/invalid-id-error.js';
