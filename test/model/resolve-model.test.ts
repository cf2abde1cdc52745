import { describe, expect, it } from 'vitest';
import { createProviderRegistry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { resolveModel, type ModelRegistry } from '../../src/model/resolve-model.js';
import { ModelResolutionError } from '../../src/contract/errors/model-resolution-error.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV2, mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { collect, textOf } from './helpers.js';

const openai = createOpenAI({ apiKey: 'test' });
const anthropic = createAnthropic({ apiKey: 'test' });

function resolutionError(run: () => unknown): ModelResolutionError {
  try {
    run();
  } catch (error) {
    if (ModelResolutionError.isInstance(error)) return error;
    throw new Error(`expected a ModelResolutionError, got ${String(error)}`);
  }
  throw new Error('expected a ModelResolutionError, nothing was thrown');
}

describe('resolveModel: model objects', () => {
  it('returns a V4 model as it is', () => {
    const model = mockModel();
    expect(resolveModel(model)).toBe(model);
  });

  it('adapts V2 and V3 models once per object (cached)', async () => {
    const v2 = mockModelV2({ parts: [...textParts('from v2'), finishPart()] });
    const v3 = mockModelV3({ parts: [...textParts('from v3'), finishPart()] });
    const adapted2 = resolveModel(v2);
    const adapted3 = resolveModel(v3);
    expect(adapted2.specificationVersion).toBe('v4');
    expect(adapted3.specificationVersion).toBe('v4');
    expect(resolveModel(v2)).toBe(adapted2);
    expect(resolveModel(v3)).toBe(adapted3);
    expect(textOf(await collect(adapted2))).toBe('from v2');
    expect(textOf(await collect(adapted3))).toBe('from v3');
  });

  it('rejects an object that is not a model, naming what was given and what is accepted', () => {
    const error = resolutionError(() => resolveModel({ name: 'gpt-4o', temperature: 1 } as never));
    expect(error.name).toBe('ModelResolutionError');
    expect(error.message).toContain('An object with keys name, temperature is not a language model');
    expect(error.message).toContain('LanguageModelV1, V2, V3 or V4');
    expect(error.message).toContain("'provider/model'");
  });

  it('rejects an unsupported specification version (V1, AI SDK 4, is adapted: test/model/from-v1.test.ts)', () => {
    const v9 = { specificationVersion: 'v9', provider: 'old', modelId: 'old-1', doStream: () => undefined };
    const error = resolutionError(() => resolveModel(v9 as never));
    expect(error.message).toContain("specification 'v9'");
    expect(error.message).toContain('supported: v1, v2, v3, v4');
    expect(error.message).toContain("provider 'old', modelId 'old-1'");
  });

  it('rejects null, numbers and functions', () => {
    expect(resolutionError(() => resolveModel(null as never)).message).toContain('null');
    expect(resolutionError(() => resolveModel(42 as never)).message).toContain('number 42');
    expect(resolutionError(() => resolveModel((() => undefined) as never)).message).toContain('not a language model');
  });
});

describe('resolveModel: a misused model names what was passed and what to pass', () => {
  it('a provider function (openai for openai(\'gpt-4o\'))', () => {
    const error = resolutionError(() => resolveModel(openai as never));
    expect(error.message).toContain('A function (provider) with keys specificationVersion, languageModel');
    expect(error.message).toContain('is a provider, not a language model');
    expect(error.message).toContain("openai('gpt-4o'), not openai");
    expect(error.message).toContain("'openai/gpt-4o'");
    expect(error.modelId).toContain('a function (provider)');
  });

  it('a provider registry', () => {
    const error = resolutionError(() => resolveModel(createProviderRegistry({ openai }) as never));
    expect(error.message).toContain('A DefaultProviderRegistry object');
    expect(error.message).toContain('is a provider (or a provider registry), not a language model');
    expect(error.message).toContain("registry.languageModel('openai:gpt-4o')");
  });

  it('a specification version that is not a version string (never adapted as V2)', () => {
    for (const version of [4, null, 'V4', '']) {
      const model = { specificationVersion: version, provider: 'p', modelId: 'm', doStream: () => undefined };
      const error = resolutionError(() => resolveModel(model as never));
      expect(error.message).toContain('implements language model specification');
      expect(error.message).toContain('supported: v1, v2, v3, v4');
      expect(error.message).toContain("openai('gpt-4o')");
    }
    expect(resolutionError(() => resolveModel({ specificationVersion: 4, doStream: () => undefined } as never)).message).toContain('specification 4 (a number, not a version string)');
  });

  it('a promise of a model', () => {
    const error = resolutionError(() => resolveModel(Promise.resolve(mockModel()) as never));
    expect(error.message).toContain('a promise, as a model: await it first');
  });

  it('a function that is not a provider: says to call it', () => {
    const error = resolutionError(() => resolveModel((() => mockModel()) as never));
    expect(error.message).toContain("call it and pass what it returns (openai('gpt-4o'), not openai)");
  });

  it('a provider returned by a provider record entry', () => {
    const error = resolutionError(() => resolveModel('acme/x', { acme: () => openai as never }));
    expect(error.modelId).toBe('acme/x');
    expect(error.message).toContain("The model provider 'acme' returned for 'x' (a function (provider)");
    expect(error.message).toContain('is a provider, not a language model');
  });
});

describe('resolveModel: string ids', () => {
  it('resolves through an AI SDK createProviderRegistry, with / or the registry separator', () => {
    const registry = createProviderRegistry({ openai, anthropic });
    const bySlash = resolveModel('openai/gpt-4.1', registry);
    const byColon = resolveModel('anthropic:claude-sonnet-4-5', registry);
    expect(bySlash.specificationVersion).toBe('v4');
    expect(bySlash.modelId).toBe('gpt-4.1');
    expect(bySlash.provider).toContain('openai');
    expect(byColon.modelId).toBe('claude-sonnet-4-5');
  });

  it('keeps the rest of the id after the first / as the model id', () => {
    const registry = createProviderRegistry({ openai });
    expect(resolveModel('openai/ft:gpt-4.1:acme/v2', registry).modelId).toBe('ft:gpt-4.1:acme/v2');
  });

  it('names the registered providers for an unknown provider in a registry', () => {
    const registry = createProviderRegistry({ openai, anthropic });
    const error = resolutionError(() => resolveModel('mistral/large', registry));
    expect(error.modelId).toBe('mistral/large');
    expect(error.message).toContain("no model 'mistral/large'");
    expect(error.message).toContain('registered providers: openai, anthropic');
    expect(error.cause).toBeDefined();
  });

  it('resolves through a record of providers: functions and objects with languageModel', () => {
    const local = mockModel({ modelId: 'local-1' });
    const legacy = mockModelV2({ modelId: 'legacy-7' });
    const registry: ModelRegistry = {
      openai,
      local: { languageModel: (modelId) => (modelId === 'local-1' ? local : mockModel({ modelId })) },
      legacy: () => legacy,
    };
    expect(resolveModel('openai/gpt-4.1-mini', registry).modelId).toBe('gpt-4.1-mini');
    expect(resolveModel('local/local-1', registry)).toBe(local);
    const adapted = resolveModel('legacy/anything', registry);
    expect(adapted.specificationVersion).toBe('v4');
    expect(adapted.modelId).toBe('legacy-7');
    expect(resolveModel('legacy/other', registry)).toBe(adapted); // same V2 object: same adapter
  });

  it('names the registered providers for an unknown provider in a record', () => {
    const error = resolutionError(() => resolveModel('mistral/large', { openai, anthropic }));
    expect(error.message).toBe("Unknown provider 'mistral' in model id 'mistral/large'. Registered providers: openai, anthropic.");
  });

  it('reports an unknown model when the provider throws or returns nothing', () => {
    const throwing = resolutionError(() =>
      resolveModel('acme/nope', {
        acme: () => {
          throw new Error('no such model: nope');
        },
      }),
    );
    expect(throwing.message).toBe("Provider 'acme' has no model 'nope': no such model: nope.");
    expect(throwing.cause).toBeInstanceOf(Error);
    const empty = resolutionError(() => resolveModel('acme/nope', { acme: () => undefined as never }));
    expect(empty.message).toContain("Provider 'acme' has no model 'nope'");
  });

  it('reports a provider that returns something that is not a model', () => {
    const error = resolutionError(() => resolveModel('acme/x', { acme: () => ({ hello: 'world' }) as never }));
    expect(error.message).toContain("The model provider 'acme' returned for 'x' (an object with keys hello)");
    expect(error.message).toContain('not a language model');
  });

  it('rejects an id without a provider part', () => {
    const error = resolutionError(() => resolveModel('gpt-4.1', { openai }));
    expect(error.message).toBe("Model id 'gpt-4.1' is not of the form 'provider/model'. Registered providers: openai.");
  });

  it('rejects a string id without a registry, saying what to pass instead', () => {
    const error = resolutionError(() => resolveModel('openai/gpt-4.1'));
    expect(error.message).toContain('no model registry was given');
    expect(error.message).toContain('createProviderRegistry');
  });

  it('rejects a registry entry that is not a provider', () => {
    const error = resolutionError(() => resolveModel('acme/x', { acme: 'not a provider' } as never));
    expect(error.message).toContain("Registry entry 'acme' is the string 'not a provider', not a provider");
  });
});
