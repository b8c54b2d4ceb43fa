import { navigate, withQuery } from "../router.ts";

/** A filter kept in the URL query under `param`; choosing one starts the list again from its first page. */
export function Select(props: {
  label: string;
  param: string;
  value: string | null;
  options: { value: string; label: string }[];
  resets?: string[];
}) {
  const { label, param, value, options, resets = ["cursor"] } = props;
  const id = `filter-${param}`;
  return (
    <span class="filter">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value ?? ""}
        onChange={(e) => {
          const chosen = (e.target as HTMLSelectElement).value;
          navigate(
            withQuery({ [param]: chosen || null, ...Object.fromEntries(resets.map((r) => [r, null])) }),
          );
        }}
      >
        <option value="">All</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </span>
  );
}
