/**
 * Whether a request's `Accept-Encoding` lets a response be sent gzipped (RFC 9110 §12.5.3): `gzip` (or
 * `x-gzip`) listed with a weight above 0, or, when gzip is not listed, `*` with a weight above 0; and not
 * weighed below an explicitly listed `identity` (a tie goes to gzip, the smaller answer). No header means
 * no preference: the body is sent as it is, as every server does. An element with an unreadable weight
 * (`gzip;q=high`) is ignored.
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(",") : header;
  // Clients send the same header on every request: the last answer is kept.
  if (text === last.text) return last.gzip;
  const gzip = decide(text);
  last = { text, gzip };
  return gzip;
}

let last = { text: "", gzip: false };

function decide(text: string): boolean {
  let gzip = -1;
  let star = -1;
  let identity = -1;
  for (const element of text.split(",")) {
    const [name = "", ...params] = element.split(";");
    const coding = name.trim().toLowerCase();
    if (coding === "") continue;
    let q = 1;
    for (const param of params) {
      const at = param.indexOf("=");
      if (at < 0 || param.slice(0, at).trim().toLowerCase() !== "q") continue;
      q = qvalue(param.slice(at + 1).trim());
    }
    if (Number.isNaN(q)) continue;
    if (coding === "gzip" || coding === "x-gzip") gzip = Math.max(gzip, q);
    else if (coding === "*") star = q;
    else if (coding === "identity") identity = q;
  }
  const weight = gzip >= 0 ? gzip : star;
  return weight > 0 && weight >= identity;
}

/** RFC 9110 §12.4.2: `0`, `0.`, `0.5`, `0.123`, `1`, `1.000`; anything else is NaN. */
function qvalue(text: string): number {
  return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(text) ? Number(text) : Number.NaN;
}
