/** Small builders for stored parts, shared by the converters. */
import type { ProviderMetadata } from 'ai';
import type { MastraMessagePart, ReasoningDetail, ReasoningPart } from '../types.js';

/** `part` with `providerMetadata` added when there is some. */
export function withMetadata<T extends object>(part: T, providerMetadata: ProviderMetadata | undefined): T & { providerMetadata?: ProviderMetadata } {
  return providerMetadata ? { ...part, providerMetadata } : part;
}

/** The first `signature` string in provider metadata (Anthropic keeps reasoning signatures there). */
export function findReasoningSignature(providerMetadata: ProviderMetadata | undefined): string | undefined {
  if (!providerMetadata) return undefined;
  for (const entry of Object.values(providerMetadata)) {
    const signature = entry['signature'];
    if (typeof signature === 'string') return signature;
  }
  return undefined;
}

/** A stored reasoning part from its text and provider metadata (the signature is mirrored into `details`). */
export function reasoningPart(text: string, providerMetadata: ProviderMetadata | undefined): MastraMessagePart {
  const signature = findReasoningSignature(providerMetadata);
  const detail: ReasoningDetail = signature === undefined ? { type: 'text', text } : { type: 'text', text, signature };
  return withMetadata({ type: 'reasoning' as const, reasoning: text, details: [detail] }, providerMetadata);
}

/** The readable text of a stored reasoning part. */
export function reasoningText(part: ReasoningPart): string {
  if (part.reasoning !== '' || !part.details) return part.reasoning;
  let text = '';
  for (const detail of part.details) if (detail.type === 'text') text += detail.text;
  return text;
}
