/**
 * A strict RFC 4180 parser for the tests of the CSV exports: every record ends with CRLF (the last one too),
 * a field is either plain (no comma, double quote, CR or LF) or enclosed in double quotes with inner quotes
 * doubled, and every record has as many fields as the header. Anything else throws, naming the offset.
 * Returns the header and the records as objects keyed by it.
 */
export function parseCsv(text: string): { header: string[]; rows: Record<string, string>[] } {
  const records: string[][] = [];
  let i = 0;
  while (i < text.length) {
    const record: string[] = [];
    for (;;) {
      let field = "";
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= text.length) throw new Error(`csv: unterminated quoted field at ${i}`);
          if (text[i] === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          field += text[i++];
        }
      } else {
        while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
          if (text[i] === '"') throw new Error(`csv: a double quote inside a plain field at ${i}`);
          field += text[i++];
        }
      }
      record.push(field);
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "\r" && text[i + 1] === "\n") {
        i += 2;
        break;
      }
      throw new Error(
        `csv: expected a comma or CRLF at ${i}, found ${JSON.stringify(text.slice(i, i + 10))}`,
      );
    }
    records.push(record);
  }
  const [header, ...body] = records;
  if (!header) throw new Error("csv: no header row");
  return {
    header,
    rows: body.map((record, n) => {
      if (record.length !== header.length) {
        throw new Error(`csv: record ${n + 1} has ${record.length} fields, the header ${header.length}`);
      }
      return Object.fromEntries(header.map((name, k) => [name, record[k]!]));
    }),
  };
}
