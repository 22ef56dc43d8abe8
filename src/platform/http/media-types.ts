// Content negotiation by the Accept header (RFC 9110 section 12.5.1), for resources served in more
// than one media type: the client's weights decide, the server's order breaks ties.

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
  /** Where the range stands in the header: of two equal weights, the one the client wrote first wins. */
  position: number;
}

/** A weight is 0 to 1 with at most three decimals; anything else is read as 1, as if it were absent. */
function weight(value: string | undefined): number {
  if (value === undefined || !/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) return 1;
  return Number(value);
}

function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const [position, part] of accept.split(',').entries()) {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim());
    const [type, subtype] = range.toLowerCase().split('/');
    if (!type || !subtype) continue;
    const q = params.find((param) => /^q=/i.test(param))?.slice(2);
    ranges.push({ type, subtype, q: weight(q), position });
  }
  return ranges;
}

/** How specifically a range names the media type: exactly (2), by its type (1), as anything (0); -1: not at all. */
function specificity(range: MediaRange, mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  if (range.type === type && range.subtype === subtype) return 2;
  if (range.type === type && range.subtype === '*') return 1;
  return range.type === '*' && range.subtype === '*' ? 0 : -1;
}

/** Whether rank `a` beats rank `b`, compared element by element; a tie keeps `b` (the server's earlier choice). */
function outranks(a: number[], b: number[]): boolean {
  for (const [i, value] of a.entries()) {
    const other = b[i] as number;
    if (value !== other) return value > other;
  }
  return false;
}

/**
 * Which of `offered` (the server's default first) to answer with: the one the Accept header weighs
 * highest, by the most specific range that names it; of equal weights the one named more specifically
 * (application/jwt before the wildcard range that covers JSON), then the one whose range comes first in the
 * header, then the server's order. Without an Accept header, or when it accepts none of
 * them, the default: a resource every client can read is better than a 406.
 */
export function preferredMediaType<T extends string>(accept: string | undefined, offered: readonly [T, ...T[]]): T {
  if (!accept) return offered[0];
  const ranges = mediaRanges(accept);
  let best: { mediaType: T; rank: number[] } | undefined;
  for (const mediaType of offered) {
    let match: { range: MediaRange; specificity: number } | undefined;
    for (const range of ranges) {
      const s = specificity(range, mediaType);
      if (s >= 0 && s > (match?.specificity ?? -1)) match = { range, specificity: s };
    }
    if (!match || match.range.q === 0) continue;
    const rank = [match.range.q, match.specificity, -match.range.position];
    if (!best || outranks(rank, best.rank)) best = { mediaType, rank };
  }
  return best?.mediaType ?? offered[0];
}
