/** `rxagent/memory`: conversation memory for agents, and the in-memory store. */
export { Memory, type MemoryOptions } from './memory.js';
export { MessageHistory, type MessageHistoryOptions } from './message-history.js';
export { MessageHistorySaver, saveUnsaved } from './message-history-saver.js';
export { InMemoryStorage, type FenceChecker, type InMemoryStorageOptions } from '../storage/in-memory-storage.js';
export { StorageError, type StorageOperation } from '../storage/errors/storage-error.js';
export { ThreadNotFoundError } from '../storage/errors/thread-not-found-error.js';
export { MissingDriverError } from '../storage/errors/missing-driver-error.js';
export { ThreadOwnershipError } from '../storage/errors/thread-ownership-error.js';
export { InvalidIdError, MAX_STORAGE_ID_LENGTH, type InvalidIdField, type InvalidIdReason } from '../storage/errors/invalid-id-error.js';
export type {
  MemoryStorage,
  StorageThread,
  StorageResource,
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  SaveFence,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageCallOptions,
} from '../storage/types.js';
