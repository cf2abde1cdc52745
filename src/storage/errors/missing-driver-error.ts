import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.MissingDriverError');

/**
 * A store's database driver — an optional peer dependency of rxagent — could not be loaded:
 * `@libsql/client` for `rxagent/storage/libsql`, `pg` for `rxagent/storage/postgres`. The message
 * names the package, the entry point that needs it and the command that installs it; `cause`
 * keeps the loader's error (a driver that is installed but fails to load, e.g. a native binary
 * for another platform, says so instead of "not installed").
 *
 * The driver is loaded when the store first needs it: `new PostgresStorage(…)` throws this error,
 * a `LibSQLStorage` rejects its first operation with a `StorageError` whose `cause` it is.
 *
 * @example
 * ```ts
 * import { MissingDriverError } from 'rxagent/memory';
 * try { await storage.getThread('t1'); } catch (error) {
 *   const missing = MissingDriverError.isInstance(error) ? error : MissingDriverError.isInstance((error as Error).cause) ? (error as Error).cause : undefined;
 *   if (missing) console.error(`npm install ${(missing as MissingDriverError).packageName}`);
 * }
 * ```
 */
export class MissingDriverError extends RxAgentError {
  private readonly [marker] = true;
  /** The npm package to install, e.g. `'@libsql/client'`. */
  readonly packageName: string;
  /** The rxagent entry point that needs it, e.g. `'rxagent/storage/libsql'`. */
  readonly entry: string;

  constructor(options: {
    /** The npm package to install. */
    packageName: string;
    /** The rxagent entry point that needs it. */
    entry: string;
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    const { packageName, entry, cause } = options;
    const notInstalled = isNotFound(cause, packageName);
    super(
      'MissingDriverError',
      notInstalled
        ? `${entry} needs the package "${packageName}" (an optional peer dependency of rxagent), which is not installed. ` +
            `Install it in your app: npm install ${packageName}`
        : `${entry} needs the package "${packageName}" (an optional peer dependency of rxagent); it is installed but failed to load: ` +
            `${cause instanceof Error ? cause.message : String(cause)}. Reinstall it for this platform and Node version: npm install ${packageName}`,
      { cause },
    );
    this.packageName = packageName;
    this.entry = entry;
  }

  static override isInstance(error: unknown): error is MissingDriverError {
    return hasMarker(error, marker);
  }
}

/** A resolution failure for the package itself (not one of its own dependencies failing inside it). */
function isNotFound(cause: unknown, packageName: string): boolean {
  if (typeof cause !== 'object' || cause === null) return false;
  const code = (cause as { code?: unknown }).code;
  const message = String((cause as { message?: unknown }).message ?? '');
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && message.includes(`'${packageName}'`);
}
