/**
 * Parses the JSON text streamed so far into the value it is becoming: unterminated strings,
 * arrays and objects are closed, a dangling key or separator is dropped. Returns `undefined`
 * while nothing usable has arrived. Synchronous (it runs per text chunk with structured output).
 */
export function parsePartialJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    // complete it below
  }
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (const character of trimmed) {
    if (inString) {
      if (escaped) escaped = false;
      else if (character === '\\') escaped = true;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') closers.push('}');
    else if (character === '[') closers.push(']');
    else if (character === '}' || character === ']') closers.pop();
  }
  let candidate = trimmed;
  if (inString) candidate += escaped ? '\\"' : '"';
  for (let attempt = 0; attempt < 4; attempt++) {
    const completed = candidate + [...closers].reverse().join('');
    try {
      return JSON.parse(completed) as unknown;
    } catch {
      // drop a dangling `"key"`, `"key":`, `,` or a cut literal, then try again
      const shortened = candidate
        .replace(/,\s*$/, '')
        .replace(/,?\s*"(?:[^"\\]|\\.)*"\s*:?\s*$/, '')
        .replace(/:\s*[^\s,{}[\]"]*$/, '')
        .replace(/,\s*[^\s,{}[\]"]+$/, '');
      if (shortened === candidate) return undefined;
      candidate = shortened;
    }
  }
  return undefined;
}
