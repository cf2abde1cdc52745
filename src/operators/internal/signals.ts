/** Turns `sendSignal` input into a signal, and signals into the user turns of a model request. */
import type { LanguageModelV4Message } from '@ai-sdk/provider';
import type { ProcessorSignal, ProcessorSignalInput } from '../../contract/signal-types.js';

const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function normaliseType(input: ProcessorSignalInput): Pick<ProcessorSignal, 'type' | 'tagName'> {
  switch (input.type) {
    case 'user-message':
      return { type: 'user', tagName: input.tagName ?? 'user' };
    case 'system-reminder':
    case 'reactive':
      return { type: 'reactive', tagName: input.tagName ?? 'system-reminder' };
    case 'user':
    case 'notification':
    case 'state':
      return { type: input.type, tagName: input.tagName ?? input.type };
    default:
      throw new TypeError(
        `sendSignal: unknown signal type ${JSON.stringify((input as { type?: unknown }).type)} ` +
          "(use 'reactive', 'system-reminder', 'user', 'user-message', 'notification' or 'state').",
      );
  }
}

function contentsText(contents: unknown): string {
  if (typeof contents === 'string') return contents;
  if (Array.isArray(contents)) {
    return contents
      .map((part: unknown, index) => {
        const text = (part as { type?: unknown; text?: unknown } | null)?.text;
        if ((part as { type?: unknown } | null)?.type !== 'text' || typeof text !== 'string') {
          throw new TypeError(`sendSignal: contents[${index}] must be a text part { type: 'text', text } (file parts are not supported).`);
        }
        return text;
      })
      .join('\n');
  }
  throw new TypeError('sendSignal: contents must be a string or an array of text parts.');
}

/** Validates `input` (throws a `TypeError` naming the field) and makes the signal. */
export function createSignal(input: ProcessorSignalInput, makeId: () => string, now: () => Date): ProcessorSignal {
  if (typeof input !== 'object' || input === null) throw new TypeError('sendSignal: expected a signal object { type, contents }.');
  const { type, tagName } = normaliseType(input);
  if (typeof tagName !== 'string' || !XML_NAME.test(tagName)) {
    throw new TypeError(`sendSignal: tagName ${JSON.stringify(tagName)} is not a valid XML name.`);
  }
  const attributes = input.attributes;
  if (attributes !== undefined) {
    if (typeof attributes !== 'object' || attributes === null) throw new TypeError('sendSignal: attributes must be an object.');
    for (const name of Object.keys(attributes)) {
      if (!XML_NAME.test(name)) throw new TypeError(`sendSignal: attribute name ${JSON.stringify(name)} is not a valid XML name.`);
    }
  }
  return {
    id: typeof input.id === 'string' ? input.id : makeId(),
    type,
    tagName,
    contents: contentsText(input.contents),
    ...(attributes === undefined ? {} : { attributes }),
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    ...(input.providerOptions === undefined ? {} : { providerOptions: input.providerOptions }),
    createdAt: now(),
  };
}

function attributesXml(attributes: ProcessorSignal['attributes']): string {
  if (attributes === undefined) return '';
  let xml = '';
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue;
    xml += ` ${name}="${escapeXml(String(value))}"`;
  }
  return xml;
}

/** The user turn a signal becomes in a model request. */
export function signalToPromptMessage(signal: ProcessorSignal): LanguageModelV4Message {
  const attributes = attributesXml(signal.attributes);
  const text =
    signal.type === 'user' && attributes === ''
      ? signal.contents
      : signal.contents === ''
        ? `<${signal.tagName}${attributes} />`
        : `<${signal.tagName}${attributes}>${escapeXml(signal.contents)}</${signal.tagName}>`;
  return {
    role: 'user',
    content: [{ type: 'text', text }],
    ...(signal.providerOptions === undefined ? {} : { providerOptions: signal.providerOptions }),
  };
}
