/**
 * Text files attached to messages, read as text so the guards scan them like the message's text
 * (issue 24 §6), and written back in the form they came in.
 *
 * A file part is text when its media type is `text/*` (plain, Markdown, CSV, HTML…), JSON
 * (`application/json`, any `+json` type, NDJSON), XML (`application/xml`, any `+xml` type: SVG
 * too), YAML, JavaScript or `application/x-sh`; or when it has no specific media type (empty,
 * `application/octet-stream`) and its file name ends in a text extension (`.txt`, `.md`, `.csv`,
 * `.json`…: browsers often send Markdown and CSV that way). Its `data` is a `data:` URL (base64 or
 * percent-encoded), base64 (what the message list stores for bytes and base64 input), or — when it
 * is not valid base64 — the text itself. Read with the media type's `charset` (default UTF-8);
 * written back as UTF-8.
 *
 * Not read: other media types (images, PDF, audio, office documents), files given by `http(s)` URL
 * (the provider fetches them; their content is not in the request) and provider file references.
 */
import { convertBase64ToUint8Array, convertUint8ArrayToBase64 } from '@ai-sdk/provider-utils';
import type { FilePart, MastraMessagePart } from '../../message-list/index.js';

const TEXT_TYPES = /^(?:text\/[\w.+-]+|[\w.-]+\/[\w.-]+\+(?:json|xml)|application\/(?:json|x-ndjson|jsonl|xml|yaml|x-yaml|javascript|ecmascript|x-sh|csv|x-csv|markdown|x-markdown|sql|graphql|toml|x-toml))$/;
const UNSPECIFIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);
const TEXT_EXTENSIONS = /\.(?:txt|text|md|markdown|mdx|csv|tsv|json|jsonl|ndjson|xml|ya?ml|toml|ini|cfg|conf|env|log|html?|css|jsx?|tsx?|mjs|cjs|py|rb|go|rs|java|kt|swift|c|h|cpp|hpp|cs|php|sh|bash|sql|graphql|tex|rst|srt|vtt)$/i;
const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const dataUrl = /^data:([^,]*?),(.*)$/s;

/** The media type without parameters, lower-cased, and its `charset` parameter. */
function parseMediaType(mediaType: string | undefined): { type: string; charset: string | undefined } {
  const [type = '', ...parameters] = (mediaType ?? '').split(';').map((piece) => piece.trim());
  const charset = parameters.find((parameter) => parameter.toLowerCase().startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  return { type: type.toLowerCase(), charset };
}

/**
 * Whether a file of `mediaType` (and `filename`) is read as text.
 *
 * @example
 * ```ts
 * isTextFile('text/csv'); // true
 * isTextFile('application/octet-stream', 'notes.md'); // true
 * isTextFile('image/png'); // false
 * ```
 */
export function isTextFile(mediaType: string | undefined, filename?: string): boolean {
  const { type } = parseMediaType(mediaType);
  if (TEXT_TYPES.test(type)) return true;
  return UNSPECIFIC_TYPES.has(type) && filename !== undefined && TEXT_EXTENSIONS.test(filename);
}

function decoderFor(charset: string | undefined): TextDecoder {
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** A text file's content and how to write a new content back in the same form. */
export interface TextAttachment {
  readonly text: string;
  /** The file part holding `text` instead, encoded as the original was (UTF-8). */
  withText(text: string): FilePart;
}

/**
 * The text of a file part, when it is a text file with its content in the message.
 *
 * @example
 * ```ts
 * textAttachment({ type: 'file', mimeType: 'text/plain', data: 'data:text/plain,hi%20there' })?.text; // 'hi there'
 * ```
 */
export function textAttachment(part: MastraMessagePart): TextAttachment | undefined {
  if (part.type !== 'file' || part.providerReference !== undefined || typeof part.data !== 'string') return undefined;
  if (!isTextFile(part.mimeType, part.filename)) return undefined;
  const data = part.data;
  const url = dataUrl.exec(data);
  if (url !== null) {
    const header = url[1] as string;
    const isBase64 = /;base64$/i.test(header);
    const mediaType = isBase64 ? header.slice(0, -';base64'.length) : header;
    const { charset } = parseMediaType(mediaType || part.mimeType);
    let text: string;
    try {
      text = isBase64 ? decoderFor(charset).decode(convertBase64ToUint8Array(url[2] as string)) : decodeURIComponent(url[2] as string);
    } catch {
      return undefined;
    }
    const utf8Header = mediaType.replace(/;\s*charset=[^;]*/i, '') + (charset === undefined ? '' : ';charset=utf-8');
    return {
      text,
      withText: (next) => ({
        ...part,
        data: isBase64 ? `data:${utf8Header};base64,${convertUint8ArrayToBase64(new TextEncoder().encode(next))}` : `data:${utf8Header},${encodeURIComponent(next)}`,
      }),
    };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(data)) return undefined; // fetched by the provider: not in the request
  const compact = data.replace(/\s+/g, '');
  if (compact !== '' && strictBase64.test(compact)) {
    const { charset } = parseMediaType(part.mimeType);
    return {
      text: decoderFor(charset).decode(convertBase64ToUint8Array(compact)),
      withText: (next) => ({ ...part, data: convertUint8ArrayToBase64(new TextEncoder().encode(next)), ...(charset === undefined ? {} : { mimeType: utf8MediaType(part.mimeType) }) }),
    };
  }
  return { text: data, withText: (next) => ({ ...part, data: next }) };
}

function utf8MediaType(mediaType: string): string {
  return mediaType.replace(/;\s*charset=[^;]*/i, '') + '; charset=utf-8';
}
