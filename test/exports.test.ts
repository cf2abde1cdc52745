/**
 * The public surface, entry by entry: a snapshot of every export name, so an accidental API change
 * (a new `export *`, a removed name) shows up in review. Update deliberately with `vitest -u`.
 */
import { describe, expect, it } from 'vitest';
import { entries } from '../scripts/entries.mjs';

describe('public exports', () => {
  for (const [subpath, file] of Object.entries(entries as Record<string, string>)) {
    it(`${subpath} exports exactly the curated names`, async () => {
      const module = (await import(`../${file}`)) as Record<string, unknown>;
      const names = Object.keys(module).sort();
      expect(names.length).toBeGreaterThan(0);
      expect(names).toMatchSnapshot();
    });
  }
});
