/**
 * Property (issue 24 §6): a secret from the presets anywhere in a text file attached to a user
 * message — any text media type, any form of the data (base64, data URL base64 or
 * percent-encoded, bytes, tagged text), with text and other files around it — never reaches the
 * model and is never stored, with `RegexFilterProcessor` in `redact` mode; with `block`, the run is
 * tripped before the model is called.
 *
 * Case count: `RXAGENT_PROPERTY_RUNS` / 4 (one agent run with memory per case; CI 250, soak 5,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { normalizeForMatching } from '../../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { ATTACHMENT_FORMS, decodedJson, filePart, promptText, TEXT_FILES } from './support/attachments.js';
import { secretArbitrary } from './support/secrets.js';

const line = fc.string({ unit: fc.constantFrom(...'abcdefgh ,;:-'), maxLength: 30 });

describe('text attachments (property-based)', () => {
  it(
    'a secret anywhere in an attached text file, in any form: the model and the store never see it',
    async () => {
      const arbitrary = fc.record({
        secret: secretArbitrary,
        before: fc.array(line, { maxLength: 4 }),
        after: fc.array(line, { maxLength: 4 }),
        form: fc.constantFrom(...ATTACHMENT_FORMS),
        file: fc.constantFrom(...TEXT_FILES),
        block: fc.boolean(),
        image: fc.boolean(),
      });
      await checkProperty(
        'attachments',
        arbitrary,
        async ({ secret, before, after, form, file, block, image }) => {
          const content = [...before, `value: ${secret}`, ...after].join('\n');
          const model = mockModel({ parts: [...textParts('Noted.'), finishPart()] });
          const storage = new InMemoryStorage();
          const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), inputProcessors: [new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: block ? 'block' : 'redact' })] });
          const parts = [
            { type: 'text' as const, text: 'Please look at the attachment.' },
            ...(image ? [filePart('not text', 'base64', { mediaType: 'image/png', filename: 'chart.png' })] : []),
            filePart(content, form, file),
          ];
          const result = await agent.generate([{ role: 'user', content: parts }], { memory: { thread: 't', resource: 'u' } });
          const needle = normalizeForMatching(secret).text;
          const seen = [
            ['model', model.calls.map((call) => promptText(call.prompt)).join('\n')],
            ['memory', decodedJson(await storage.getMessages({ threadId: 't' }))],
          ].filter(([, text]) => normalizeForMatching(text as string).text.includes(needle));
          if (seen.length > 0) throw new Error(`${form} ${file.mediaType}: ${JSON.stringify(secret)} seen by ${seen.map(([who]) => who).join(', ')}`);
          if (block && (result.tripwire === undefined || model.calls.length > 0)) throw new Error(`${form} ${file.mediaType}: block did not trip before the model`);
        },
        Math.max(20, Math.floor(PROPERTY_RUNS / 4)),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
