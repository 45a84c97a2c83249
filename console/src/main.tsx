import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { type AgentSummary, ApiError, getJson, saveToken, takeToken, whenUnauthorized } from "./api.js";
import { ChatView } from "./components/chat-view.js";
import { RunView } from "./components/run-view.js";
import { RunsView } from "./components/runs-view.js";
import { TokenGate } from "./components/token-gate.js";
import "./styles.css";

type Route = { page: "chat"; agentId?: string } | { page: "runs" } | { page: "run"; runId: string };

function routeOf(hash: string): Route {
  const [, page, id] = hash.replace(/^#/, "").split("/");
  if (page === "runs" && id) return { page: "run", runId: decodeURIComponent(id) };
  if (page === "runs") return { page: "runs" };
  return id ? { page: "chat", agentId: decodeURIComponent(id) } : { page: "chat" };
}

function useRoute(): [Route, (hash: string) => void] {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash));
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  const navigate = useCallback((hash: string) => {
    location.hash = hash;
  }, []);
  return [route, navigate];
}

type Access = "checking" | "open" | "needs-token" | "refused";

function App() {
  const [route, navigate] = useRoute();
  const [agents, setAgents] = useState<AgentSummary[]>([]);
  const [access, setAccess] = useState<Access>("checking");
  const [problem, setProblem] = useState<string | null>(null);
  const [hasToken, setHasToken] = useState(() => takeToken() !== null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    // Any refused call, now or later, asks for the token again.
    whenUnauthorized(() => setAccess(takeToken() === null ? "needs-token" : "refused"));
    getJson<{ agents: AgentSummary[] }>("agents")
      .then((body) => {
        setAgents(body.agents);
        setAccess("open");
      })
      .catch((error: unknown) => {
        if (!(error instanceof ApiError && error.status === 401))
          setProblem(error instanceof Error ? error.message : String(error));
      });
  }, [attempt]);

  if (access === "needs-token" || access === "refused")
    return (
      <TokenGate
        refused={access === "refused"}
        onToken={(token) => {
          saveToken(token);
          setHasToken(true);
          setAccess("checking");
          setAttempt(attempt + 1);
        }}
      />
    );
  const agent =
    route.page !== "chat"
      ? undefined
      : route.agentId === undefined
        ? agents[0]
        : agents.find((candidate) => candidate.id === route.agentId);
  return (
    <div class="shell">
      <nav class="sidebar">
        <div class="brand">
          <span class="brand-mark">K</span> Keel
          <span class="brand-sub">console</span>
        </div>
        <div class="nav-section">Agents</div>
        {agents.map((candidate) => (
          <a
            key={candidate.id}
            href={`#/chat/${encodeURIComponent(candidate.id)}`}
            class={`nav-item${route.page === "chat" && agent?.id === candidate.id ? " active" : ""}`}
          >
            <span class="avatar">{candidate.name.slice(0, 1).toUpperCase()}</span>
            <span class="nav-text">
              {candidate.name}
              <span class="nav-id">{candidate.id}</span>
            </span>
          </a>
        ))}
        <div class="nav-section">Observe</div>
        <a href="#/runs" class={`nav-item${route.page !== "chat" ? " active" : ""}`}>
          <span class="avatar avatar-icon">≡</span>
          <span class="nav-text">Runs</span>
        </a>
        <span class="spacer" />
        <div class="sidebar-foot">
          {hasToken ? (
            <button
              type="button"
              class="link"
              onClick={() => {
                saveToken(null);
                setHasToken(false);
                setAccess("needs-token");
              }}
            >
              Forget token
            </button>
          ) : (
            <span class="muted">Local server</span>
          )}
        </div>
      </nav>
      <main class="main">
        {problem !== null && <div class="error-box page">{problem}</div>}
        {access === "checking" && problem === null && <div class="empty page">Connecting…</div>}
        {access === "open" && route.page === "chat" && agent !== undefined && (
          <ChatView key={agent.id} agent={agent} navigate={navigate} />
        )}
        {access === "open" && route.page === "chat" && agent === undefined && (
          <div class="empty page">
            {route.agentId === undefined
              ? "This server has no agents."
              : `This server has no agent '${route.agentId}': pick one on the left.`}
          </div>
        )}
        {access === "open" && route.page === "runs" && <RunsView agents={agents} navigate={navigate} />}
        {access === "open" && route.page === "run" && (
          <RunView key={route.runId} runId={route.runId} agents={agents} navigate={navigate} />
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
