import type { Formatted } from "../format.ts";

/** A formatted value with its exact value on hover (and for screen readers through `title`). */
export function Fmt({ value, testid }: { value: Formatted; testid?: string }) {
  return (
    <span title={value.exact} data-testid={testid}>
      {value.text}
    </span>
  );
}
