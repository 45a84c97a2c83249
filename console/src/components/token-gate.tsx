import { useState } from "preact/hooks";

/** Asked for when the server wants a bearer token: it is kept for this tab only. */
export function TokenGate({ onToken, refused }: { onToken: (token: string) => void; refused: boolean }) {
  const [token, setToken] = useState("");
  return (
    <div class="gate">
      <form
        class="gate-card"
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim() !== "") onToken(token.trim());
        }}
      >
        <div class="brand brand-large">
          <span class="brand-mark">K</span> Keel
        </div>
        <h2>This server needs a token</h2>
        <p class="muted">
          Paste the token <code>keel serve</code> was started with (<code>--token</code> or{" "}
          <code>KEEL_SERVER_TOKEN</code>). It is kept in this tab only, and sent as a bearer token.
        </p>
        {refused && <div class="error-box">That token was not accepted.</div>}
        <input
          type="password"
          autocomplete="off"
          placeholder="Token"
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
        />
        <button type="submit" class="button primary wide">
          Connect
        </button>
      </form>
    </div>
  );
}
