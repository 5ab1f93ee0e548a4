// The backend reports spans as UTF-8 byte offsets (Rust string indices); JavaScript strings are
// indexed by UTF-16 code units. These convert between the two.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-16 index in `text` of UTF-8 byte offset `byte` (clamped to the text). */
export function byteToIndex(text: string, byte: number): number {
  const bytes = encoder.encode(text);
  const clamped = Math.max(0, Math.min(byte, bytes.length));
  return decoder.decode(bytes.subarray(0, clamped)).length;
}

/** `text` split around a byte span: before, inside, after. */
export function splitAtSpan(
  text: string,
  span: { start: number; end: number },
): [string, string, string] {
  const start = byteToIndex(text, span.start);
  const end = Math.max(start, byteToIndex(text, span.end));
  return [text.slice(0, start), text.slice(start, end), text.slice(end)];
}

/** `text` split around the first occurrence of `part`, or null when it is not there. */
export function splitAround(text: string, part: string): [string, string, string] | null {
  const at = part ? text.indexOf(part) : -1;
  if (at < 0) return null;
  return [text.slice(0, at), part, text.slice(at + part.length)];
}
