import { useState } from "preact/hooks";

/** A button that copies `text` (a hash or an address) to the clipboard and says so. */
export function Copy({ text, what }: { text: string; what: string }) {
  const [done, setDone] = useState(false);
  const copy = () => {
    navigator.clipboard?.writeText(text).then(
      () => {
        setDone(true);
        setTimeout(() => setDone(false), 1_500);
      },
      () => undefined,
    );
  };
  return (
    <button type="button" class="copy" onClick={copy} aria-label={`Copy ${what}`} title={`Copy ${what}`}>
      {done ? "Copied" : "Copy"}
    </button>
  );
}
