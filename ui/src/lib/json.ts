// JSON for people: pretty-printed, with long strings and long arrays shortened in the compact
// view (the full value stays one click away).

export const STRING_LIMIT = 300;
export const ARRAY_LIMIT = 50;

/** A copy of `value` with strings over `STRING_LIMIT` characters and arrays over
 * `ARRAY_LIMIT` items cut, each cut saying how much it left out. */
export function shorten(value: unknown): { value: unknown; cut: boolean } {
  let cut = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string" && v.length > STRING_LIMIT) {
      cut = true;
      return `${v.slice(0, STRING_LIMIT)}… (${v.length - STRING_LIMIT} more characters)`;
    }
    if (Array.isArray(v)) {
      const kept = v.slice(0, ARRAY_LIMIT).map(walk);
      if (v.length > ARRAY_LIMIT) {
        cut = true;
        kept.push(`… ${v.length - ARRAY_LIMIT} more items`);
      }
      return kept;
    }
    if (typeof v === "object" && v !== null) {
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item)]));
    }
    return v;
  };
  const shortened = walk(value);
  return { value: shortened, cut };
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}
