/**
 * Text files attached to a user message, in every form a client or a server can send one, and
 * what the model and the store end up holding of them (decoded, so a secret inside shows up).
 */
import type { ModelMessage } from 'ai';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';

/** How the attachment's content is given. */
export type AttachmentForm = 'base64' | 'data URL (base64)' | 'data URL (percent-encoded)' | 'Uint8Array' | 'tagged text';
export const ATTACHMENT_FORMS: readonly AttachmentForm[] = ['base64', 'data URL (base64)', 'data URL (percent-encoded)', 'Uint8Array', 'tagged text'];

/** Media types (and a file name) the guards read as text. */
export const TEXT_FILES: ReadonlyArray<{ mediaType: string; filename: string }> = [
  { mediaType: 'text/plain', filename: 'notes.txt' },
  { mediaType: 'text/markdown', filename: 'README.md' },
  { mediaType: 'text/csv', filename: 'users.csv' },
  { mediaType: 'application/json', filename: 'config.json' },
  { mediaType: 'text/plain; charset=utf-8', filename: 'log.txt' },
  { mediaType: 'application/octet-stream', filename: 'notes.md' },
];

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The AI SDK file part holding `content`. */
export function filePart(content: string, form: AttachmentForm, file: { mediaType: string; filename: string }): Extract<Exclude<ModelMessage['content'], string>[number], { type: 'file' }> {
  const bare = file.mediaType.split(';')[0] as string;
  const data =
    form === 'base64' ? base64(content)
    : form === 'data URL (base64)' ? `data:${bare};base64,${base64(content)}`
    : form === 'data URL (percent-encoded)' ? `data:${bare},${encodeURIComponent(content)}`
    : form === 'Uint8Array' ? new TextEncoder().encode(content)
    : ({ type: 'text', text: content } as unknown as string);
  return { type: 'file', data, mediaType: file.mediaType, filename: file.filename };
}

/** File content of any shape, decoded to text (`Uint8Array`, base64, data URLs). */
function decodeFileData(data: unknown): string {
  if (data instanceof Uint8Array) return new TextDecoder().decode(data);
  if (data instanceof URL) return decodeFileData(data.href);
  if (typeof data !== 'string') return JSON.stringify(data);
  const url = /^data:([^,]*),(.*)$/s.exec(data);
  if (url !== null) return /;base64$/i.test(url[1] as string) ? Buffer.from(url[2] as string, 'base64').toString('utf8') : decodeURIComponent(url[2] as string);
  return `${data}\n${Buffer.from(data, 'base64').toString('utf8')}`;
}

/** A value as JSON with every file part's content (and every `data` string) decoded as well. */
export function decodedJson(value: unknown): string {
  const files: string[] = [];
  const json = JSON.stringify(value, (key, item: unknown) => {
    if (item instanceof Uint8Array) {
      files.push(decodeFileData(item));
      return '[bytes]';
    }
    if (key === 'data' || key === 'url') files.push(decodeFileData(item));
    return item;
  });
  return [json, ...files].join('\n');
}

/** What a model call was sent, with attachments decoded. */
export function promptText(prompt: LanguageModelV4Prompt): string {
  return decodedJson(prompt);
}
