import type { LanguageModelV2, LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { ModelResolutionError } from '../contract/errors/model-resolution-error.js';
import type { LanguageModelV1 } from '../contract/language-model-v1.js';
import { adaptV1 } from './from-v1.js';
import { adaptV2 } from './from-v2.js';
import { adaptV3 } from './from-v3.js';

/**
 * A language model object of any supported provider spec version.
 *
 * @example
 * ```ts
 * import type { AnyLanguageModel } from 'rxagent';
 * const model: AnyLanguageModel = openai('gpt-4.1');
 * ```
 */
export type AnyLanguageModel = LanguageModelV1 | LanguageModelV2 | LanguageModelV3 | LanguageModelV4;

/**
 * What an agent accepts as its model: a V2/V3/V4 model object, or a `'provider/model'` id
 * resolved through a {@link ModelRegistry}.
 *
 * @example
 * ```ts
 * import type { ModelInput } from 'rxagent';
 * const byId: ModelInput = 'openai/gpt-4.1';
 * ```
 */
export type ModelInput = AnyLanguageModel | string;

/**
 * A provider in a record registry: a function `(modelId) => model` (as AI SDK providers are)
 * or an object with `languageModel(modelId)`.
 *
 * @example
 * ```ts
 * import type { ProviderLike } from 'rxagent';
 * const local: ProviderLike = (modelId) => myModels[modelId];
 * ```
 */
export type ProviderLike =
  | ((modelId: string) => AnyLanguageModel)
  | {
    /** The model for an id. */
    languageModel(modelId: string): AnyLanguageModel;
  };

/**
 * Where `'provider/model'` ids are looked up: an AI SDK `createProviderRegistry(...)` result
 * (anything with `languageModel(id)`), or a record of providers such as `{ openai, anthropic }`.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import type { ModelRegistry } from 'rxagent';
 * const registry: ModelRegistry = { openai: createOpenAI({ apiKey }) };
 * ```
 */
export type ModelRegistry =
  | {
    /** The model for an id. */
    languageModel(id: string): AnyLanguageModel;
  }
  | Readonly<Record<string, ProviderLike>>;

const adaptedModels = new WeakMap<object, LanguageModelV4>();
const supportedVersions = ['v1', 'v2', 'v3', 'v4'];
const accepted =
  "Accepted: a LanguageModelV1, V2, V3 or V4 object, or a 'provider/model' id with a registry " +
  '(createProviderRegistry(...) or a record of providers such as { openai }).';

/**
 * Resolves a model input to the one spec version the loop speaks (`LanguageModelV4`): V4
 * objects are returned as they are, V2/V3 objects are adapted (once per object: the adapter
 * is cached), `'provider/model'` ids are looked up in `registry`. Anything else throws a
 * `ModelResolutionError` that names what was given and what is accepted.
 *
 * @example
 * ```ts
 * import { createProviderRegistry } from 'ai';
 * import { openai } from '@ai-sdk/openai';
 * const model = resolveModel('openai/gpt-4.1', createProviderRegistry({ openai }));
 * ```
 */
export function resolveModel(model: ModelInput, registry?: ModelRegistry): LanguageModelV4 {
  if (typeof model === 'string') return resolveModelId(model, registry);
  return toV4(model, describe(model));
}

/**
 * Throws the `ModelResolutionError` for a value that is certainly not a model, whatever it is used
 * as: a provider (`openai` where `openai('gpt-4o')` belongs, a provider registry), or an object
 * naming a specification version rxagent does not know. The Agent calls it on `config.model` when
 * it is built, since a function there is otherwise taken for a function of
 * `{ requestContext }` returning the model.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * const openai = createOpenAI({ apiKey });
 * rejectMisusedModel(openai); // ModelResolutionError: … is a provider, not a language model … openai('gpt-4o'), not openai …
 * ```
 */
export function rejectMisusedModel(model: unknown, options: {
  /** Where the value was given, put before the message (`'new Agent({ id: "a" }): config.model'`). */
  where?: string;
  /** How to name the value (default: a short description of it). */
  given?: string;
  /** The error's `modelId` (default: `given`). */
  modelId?: string;
} = {}): void {
  if ((typeof model !== 'object' && typeof model !== 'function') || model === null) return;
  const given = options.given ?? describe(model);
  const modelId = options.modelId ?? given;
  const where = options.where === undefined ? '' : `${options.where}: `;
  const record = model as { doStream?: unknown; languageModel?: unknown; specificationVersion?: unknown };
  if (typeof record.doStream !== 'function' && (typeof record.languageModel === 'function' || (typeof model === 'function' && record.specificationVersion !== undefined))) {
    throw new ModelResolutionError(
      modelId,
      `${where}${capitalize(given)} is a ${typeof model === 'function' ? 'provider' : 'provider (or a provider registry)'}, not a language model. Pass the model it makes: call the provider with a ` +
        "model id — openai('gpt-4o'), not openai; anthropic('claude-sonnet-4-5'), not anthropic; or " +
        "registry.languageModel('openai:gpt-4o') — or pass the id as a string, 'openai/gpt-4o', and give the agent " +
        '`providers` (createProviderRegistry(...) or a record of providers such as { openai }).',
    );
  }
  const version = record.specificationVersion;
  if (version !== undefined && !(typeof version === 'string' && supportedVersions.includes(version))) {
    throw new ModelResolutionError(
      modelId,
      `${where}${capitalize(given)} implements language model specification ${typeof version === 'string' ? `'${version}'` : `${String(version)} (a ${typeof version}, not a version string)`}, ` +
        `which rxagent does not support (supported: ${supportedVersions.join(', ')}). Pass a model made by an AI SDK ` +
        "provider package of AI SDK 4 to 7 (e.g. openai('gpt-4o')), or upgrade rxagent if the provider is newer.",
    );
  }
}

function toV4(model: unknown, given: string, modelId = given): LanguageModelV4 {
  if (typeof model !== 'object' && typeof model !== 'function') {
    throw new ModelResolutionError(modelId, `Cannot use ${given} as a model. ${accepted}`);
  }
  if (model === null) throw new ModelResolutionError(modelId, `Cannot use null as a model. ${accepted}`);
  if (typeof (model as { then?: unknown }).then === 'function') {
    throw new ModelResolutionError(
      modelId,
      `Cannot use ${given}, a promise, as a model: await it first (const model = await …), or pass a function of { requestContext } that returns it.`,
    );
  }
  rejectMisusedModel(model, { given, modelId });
  const version: unknown = (model as { specificationVersion?: unknown }).specificationVersion;
  if (version === undefined || typeof (model as { doStream?: unknown }).doStream !== 'function') {
    const hint = typeof model === 'function' ? " If this function makes the model, call it and pass what it returns (openai('gpt-4o'), not openai)." : '';
    throw new ModelResolutionError(
      modelId,
      `${capitalize(given)} is not a language model (it needs specificationVersion and doStream).${hint} ${accepted}`,
    );
  }
  const typed = model as AnyLanguageModel;
  if (typed.specificationVersion === 'v4') return typed;
  const cached = adaptedModels.get(typed);
  if (cached) return cached;
  const adapted = typed.specificationVersion === 'v3' ? adaptV3(typed) : typed.specificationVersion === 'v1' ? adaptV1(typed) : adaptV2(typed);
  adaptedModels.set(typed, adapted);
  return adapted;
}

function resolveModelId(id: string, registry: ModelRegistry | undefined): LanguageModelV4 {
  if (registry === undefined) {
    throw new ModelResolutionError(
      id,
      `Model id '${id}' is a string, but no model registry was given. Pass a LanguageModelV2/V3/V4 ` +
        "object, or give the agent a registry (createProviderRegistry(...) or a record of providers such as { openai }).",
    );
  }
  if (isRegistryObject(registry)) return resolveWithRegistryObject(id, registry);
  return resolveWithProviderRecord(id, registry);
}

function isRegistryObject(registry: ModelRegistry): registry is { languageModel(id: string): AnyLanguageModel } {
  return typeof (registry as { languageModel?: unknown }).languageModel === 'function';
}

/** Tries the id as given (the registry's own separator), then with its first `/` read as `:`. */
function resolveWithRegistryObject(
  id: string,
  registry: { languageModel(id: string): AnyLanguageModel },
): LanguageModelV4 {
  const slash = id.indexOf('/');
  const colon = id.indexOf(':');
  const candidates = [id];
  if (slash > 0 && (colon === -1 || slash < colon)) candidates.push(`${id.slice(0, slash)}:${id.slice(slash + 1)}`);
  let lastError: unknown;
  for (const candidate of candidates) {
    let model: unknown;
    try {
      model = registry.languageModel(candidate);
    } catch (error) {
      lastError = error;
      continue;
    }
    return toV4(model, `the registry's model for '${id}' (${describe(model)})`, id);
  }
  const providers = availableProviders(lastError);
  throw new ModelResolutionError(
    id,
    `The model registry has no model '${id}'${lastError instanceof Error ? `: ${lastError.message}` : ''}. ` +
      `Expected 'provider/model' (or 'provider:model')` +
      (providers ? `; registered providers: ${providers.join(', ')}.` : '.'),
    { cause: lastError },
  );
}

function resolveWithProviderRecord(id: string, registry: Readonly<Record<string, ProviderLike>>): LanguageModelV4 {
  const providers = Object.keys(registry);
  const separatorIndex = id.includes('/') ? id.indexOf('/') : id.indexOf(':');
  if (separatorIndex <= 0 || separatorIndex === id.length - 1) {
    throw new ModelResolutionError(
      id,
      `Model id '${id}' is not of the form 'provider/model'. Registered providers: ${list(providers)}.`,
    );
  }
  const providerId = id.slice(0, separatorIndex);
  const modelId = id.slice(separatorIndex + 1);
  const provider: unknown = Object.hasOwn(registry, providerId) ? registry[providerId] : undefined;
  if (provider === undefined) {
    throw new ModelResolutionError(
      id,
      `Unknown provider '${providerId}' in model id '${id}'. Registered providers: ${list(providers)}.`,
    );
  }
  let model: unknown;
  try {
    if (typeof (provider as { languageModel?: unknown }).languageModel === 'function') {
      model = (provider as { languageModel(modelId: string): unknown }).languageModel(modelId);
    } else if (typeof provider === 'function') {
      model = (provider as (modelId: string) => unknown)(modelId);
    } else {
      throw new ModelResolutionError(
        id,
        `Registry entry '${providerId}' is ${describe(provider)}, not a provider: expected a function ` +
          '(modelId) => model or an object with languageModel(modelId).',
      );
    }
  } catch (error) {
    if (ModelResolutionError.isInstance(error)) throw error;
    throw new ModelResolutionError(
      id,
      `Provider '${providerId}' has no model '${modelId}'` +
        `${error instanceof Error ? `: ${error.message}` : ''}.`,
      { cause: error },
    );
  }
  if (model === undefined || model === null) {
    throw new ModelResolutionError(id, `Provider '${providerId}' has no model '${modelId}' (it returned ${String(model)}).`);
  }
  return toV4(model, `the model provider '${providerId}' returned for '${modelId}' (${describe(model)})`, id);
}

function availableProviders(error: unknown): string[] | undefined {
  const providers: unknown = (error as { availableProviders?: unknown } | undefined)?.availableProviders;
  return Array.isArray(providers) && providers.every((entry) => typeof entry === 'string') ? providers : undefined;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function list(names: readonly string[]): string {
  return names.length === 0 ? '(none)' : names.join(', ');
}

/** A short, safe description of an arbitrary value for error messages. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string '${value}'`;
  if (typeof value === 'function') {
    const keys = Object.keys(value).slice(0, 4);
    return `a function${value.name ? ` (${value.name})` : ''}${keys.length === 0 ? '' : ` with keys ${keys.join(', ')}${Object.keys(value).length > 4 ? ', …' : ''}`}`;
  }
  if (typeof value !== 'object') return `${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  const record = value as Record<string, unknown>;
  const constructorName = Object.getPrototypeOf(value)?.constructor?.name;
  const kind = constructorName && constructorName !== 'Object' ? `a ${constructorName} object` : 'an object';
  const version = record['specificationVersion'];
  if (typeof version === 'string') {
    const provider = typeof record['provider'] === 'string' ? record['provider'] : '?';
    const modelId = typeof record['modelId'] === 'string' ? record['modelId'] : '?';
    return `${kind} (specificationVersion '${version}', provider '${provider}', modelId '${modelId}')`;
  }
  const keys = Object.keys(record).slice(0, 5);
  return keys.length === 0 ? `${kind} with no properties` : `${kind} with keys ${keys.join(', ')}`;
}
