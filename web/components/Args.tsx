import { formatArg } from "../format.ts";

/** Decoded arguments as a list of name and value, as text (never HTML: they come from the chain). */
export function Args({ args }: { args: Record<string, unknown> }) {
  const entries = Object.entries(args);
  if (entries.length === 0) return <span class="muted">no arguments</span>;
  return (
    <dl class="args">
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd class="mono">{formatArg(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
