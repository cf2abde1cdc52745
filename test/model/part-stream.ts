/** A provider's web stream of given parts for the hostile-provider tests, and what became of it. */

/** What the test saw of a provider stream: read to its end, cancelled, or still held. */
export interface StreamProbe {
  state: 'open' | 'drained' | 'cancelled';
}

/** A pull stream of `parts` (anything); after the last one it closes, or never settles with `hang`. */
export function partStream(parts: readonly unknown[], probe: StreamProbe = { state: 'open' }, hang = false): ReadableStream<unknown> {
  let index = 0;
  return new ReadableStream<unknown>(
    {
      pull(controller) {
        if (index < parts.length) {
          controller.enqueue(parts[index++]);
          return undefined;
        }
        if (hang) return new Promise<void>(() => undefined);
        probe.state = 'drained';
        controller.close();
        return undefined;
      },
      cancel() {
        probe.state = 'cancelled';
      },
    },
    { highWaterMark: 0 },
  );
}
