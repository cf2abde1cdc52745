/**
 * File data helpers: stored file parts keep `data` as one string (base64, a `data:` URL or any
 * other URL), plus an optional provider reference. These convert from and to the AI SDK shapes.
 */
import { convertBase64ToUint8Array, convertUint8ArrayToBase64 } from '@ai-sdk/provider-utils';
import { isRecord } from '../schemas/schema-helpers.js';

const urlSchemePattern = /^[a-z][a-z0-9+.-]*:/i;
const dataUrlPattern = /^data:([^,]*?),(.*)$/s;

/** True when `value` starts with a URL scheme (`https:`, `data:`, …); base64 never contains `:`. */
export function isUrlString(value: string): boolean {
  return urlSchemePattern.test(value);
}

/** Splits a `data:` URL into its media type and base64 payload (percent-encoded payloads are re-encoded). */
export function parseDataUrl(value: string): { mediaType: string | undefined; base64: string } | undefined {
  const match = dataUrlPattern.exec(value);
  if (!match) return undefined;
  const header = match[1] ?? '';
  const payload = match[2] ?? '';
  const isBase64 = header.endsWith(';base64');
  const mediaType = (isBase64 ? header.slice(0, -';base64'.length) : header).split(';')[0] || undefined;
  const base64 = isBase64 ? payload : textToBase64(decodeURIComponent(payload));
  return { mediaType, base64 };
}

/** Bytes to base64. */
export function bytesToBase64(bytes: Uint8Array | ArrayBuffer): string {
  return convertUint8ArrayToBase64(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
}

/** UTF-8 text to base64. */
export function textToBase64(text: string): string {
  return bytesToBase64(new TextEncoder().encode(text));
}

/** base64 to bytes. */
export function base64ToBytes(base64: string): Uint8Array {
  return convertBase64ToUint8Array(base64);
}

/** How a stored file part holds its content. */
export interface StoredFileData {
  data: string;
  providerReference?: Record<string, string>;
}

/**
 * Converts AI SDK file content (string, bytes, `URL`, tagged `FileData`, provider reference) to
 * the stored form. Call only on validated input.
 */
export function toStoredFileData(data: unknown): StoredFileData {
  if (typeof data === 'string') return { data };
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return { data: bytesToBase64(data) };
  if (data instanceof URL) return { data: data.href };
  if (isRecord(data)) {
    switch (data['type']) {
      case 'data':
        return toStoredFileData(data['data']);
      case 'url':
        return toStoredFileData(data['url']);
      case 'text':
        return { data: textToBase64(String(data['text'])) };
      case 'reference':
        return { data: '', providerReference: data['reference'] as Record<string, string> };
      default:
        return { data: '', providerReference: data as Record<string, string> };
    }
  }
  return { data: String(data) };
}

/** Model-facing file content: a base64 string, a URL, or a provider reference. */
export type ModelFileData = { type: 'data'; data: string } | { type: 'url'; url: URL } | { type: 'reference'; reference: Record<string, string> };

/** Converts a stored file part's content to the tagged model form (`data:` URLs are unpacked). */
export function toModelFileData(file: StoredFileData): ModelFileData {
  if (file.providerReference) return { type: 'reference', reference: file.providerReference };
  if (!isUrlString(file.data)) return { type: 'data', data: file.data };
  const dataUrl = parseDataUrl(file.data);
  if (dataUrl) return { type: 'data', data: dataUrl.base64 };
  return { type: 'url', url: new URL(file.data) };
}

/** A stored file's content as a URL string for a UI part (`data:` URL for raw base64). */
export function toUrlString(file: StoredFileData, mediaType: string): string {
  if (file.data === '' || isUrlString(file.data)) return file.data;
  return `data:${mediaType};base64,${file.data}`;
}
