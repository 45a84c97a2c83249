import { useState } from "preact/hooks";
import { pretty } from "../format.js";

/** Past this many characters a value is folded to its first lines until asked for. */
const FOLD_AT = 600;

/** A value as JSON; a large one shows its start and a button for the rest. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  const text = pretty(value);
  const [open, setOpen] = useState(false);
  const large = text.length > FOLD_AT;
  return (
    <div class="json">
      {label !== undefined && <div class="json-label">{label}</div>}
      <pre class={large && !open ? "json-folded" : ""}>
        {large && !open ? `${text.slice(0, FOLD_AT)}…` : text}
      </pre>
      {large && (
        <button type="button" class="link" onClick={() => setOpen(!open)}>
          {open ? "Show less" : `Show all (${(text.length / 1024).toFixed(1)} KB)`}
        </button>
      )}
    </div>
  );
}
