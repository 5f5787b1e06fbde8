import type { AgentScopes } from "@/lib/model/agent-scopes";
import type { AgentSummary, AgentTokenState, AgentTokenSummary } from "@/lib/use-cases/agents/list-agents";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { EmptyState } from "@/components/empty-state";
import { CreateAgentForm, TokenControls } from "@/components/agents/agents-forms";
import "@/components/agents/agents.css";

const stateBadge: Record<AgentTokenState, { className: string; label: string }> = {
  live: { className: "badge badge--success", label: "live" },
  expired: { className: "badge badge--neutral", label: "expired" },
  revoked: { className: "badge badge--danger", label: "revoked" },
};

function ScopeList({ list, every, none }: { list: AgentScopes["workflows"]; every: string; none: string }) {
  if (list === "*") return <>{every}</>;
  if (list.length === 0) return <span className="subtle">{none}</span>;
  return (
    <>
      {list.map((name, i) => (
        <span key={name}>
          {i > 0 ? ", " : null}
          <code>{name}</code>
        </span>
      ))}
    </>
  );
}

function TokenItem({ token }: { token: AgentTokenSummary }) {
  const badge = stateBadge[token.state];
  return (
    <li className={`agent-token agent-token--${token.state}`} data-token-id={token.id} data-state={token.state}>
      <div className="agent-token__head">
        <code className="agent-token__prefix">{token.prefix}…</code>
        <span className="subtle mono">{token.id}</span>
        <span className={badge.className}>{badge.label}</span>
      </div>
      <dl className="facts agent-token__facts">
        <div>
          <dt>Workflows</dt>
          <dd>
            <ScopeList list={token.scopes.workflows} every="every workflow, present and future" none="none" />
          </dd>
        </div>
        <div>
          <dt>Tools</dt>
          <dd>
            <ScopeList list={token.scopes.tools} every="every tool, present and future" none="none" />
          </dd>
        </div>
        <div>
          <dt>Take over leases</dt>
          <dd>{token.scopes.take_over_leases ? "yes" : "no"}</dd>
        </div>
        <div>
          <dt>Read restricted fields</dt>
          <dd>{token.scopes.read_restricted ? "yes" : "no"}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <RelativeTime value={token.createdAt} />
          </dd>
        </div>
        <div>
          <dt>
            {token.state === "expired" ? "Expired" : token.state === "revoked" ? "Would have expired" : "Expires"}
          </dt>
          <dd>{token.expiresAt ? <RelativeTime value={token.expiresAt} /> : "never"}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>
            {token.lastUsedAt ? <RelativeTime value={token.lastUsedAt} /> : <span className="subtle">never</span>}
          </dd>
        </div>
        {token.revokedAt ? (
          <div>
            <dt>Revoked</dt>
            <dd>
              <RelativeTime value={token.revokedAt} />
            </dd>
          </div>
        ) : null}
      </dl>
      <TokenControls tokenId={token.id} prefix={token.prefix} live={token.state === "live"} />
    </li>
  );
}

function AgentCard({ agent }: { agent: AgentSummary }) {
  const titleId = `agent-${agent.name}`;
  return (
    <article className="card agent-card" aria-labelledby={titleId} data-identity={agent.identity}>
      <header className="agent-card__head">
        <h3 id={titleId}>{agent.name}</h3>
        {agent.role !== "agent" ? <span className="role-badge">{agent.role} role</span> : null}
        <span className={agent.liveTokens > 0 ? "badge badge--success" : "badge badge--neutral"}>
          {agent.liveTokens} of {pluralize(agent.tokens.length, "token")} live
        </span>
      </header>
      <p className="agent-card__identity">
        <code>{agent.identity}</code>
      </p>
      <ul className="agent-tokens" aria-label={`Tokens of ${agent.name}`}>
        {agent.tokens.map((t) => (
          <TokenItem key={t.id} token={t} />
        ))}
      </ul>
    </article>
  );
}

/** /admin/agents: every agent identity with its tokens, and the admin's controls over them. */
export function AgentsView({
  agents,
  workflows,
  tools,
}: {
  agents: AgentSummary[];
  workflows: readonly string[];
  tools: readonly string[];
}) {
  return (
    <div className="agents-page">
      <header className="page-header">
        <div className="page-header__row">
          <h1>Agents</h1>
        </div>
        <p className="lede">
          An agent is an identity (its SPIFFE ID) that calls the API with bearer tokens. Each token has an expiry and
          scopes: the workflows it may create and drive, the tools it may call, whether it may take over another
          agent&apos;s lease. A token is shown once, when it is made; Verity keeps only its hash. Every creation,
          revocation and rotation is recorded in the audit log.
        </p>
      </header>

      <section className="card" aria-labelledby="agents-create-title">
        <h2 id="agents-create-title">Create an agent</h2>
        <CreateAgentForm workflows={workflows} tools={tools} />
      </section>

      <section aria-labelledby="agents-list-title" data-testid="agents">
        <h2 id="agents-list-title" className="agents-page__list-title">
          Agents ({agents.length})
        </h2>
        {agents.length === 0 ? (
          <EmptyState title="No agents yet">
            <p>
              Create one above, or on the server with{" "}
              <code>npm run -s verity -- agents create &lt;name&gt; --workflows … --tools …</code>. Its token is shown
              once; hand it to the agent&apos;s configuration.
            </p>
          </EmptyState>
        ) : (
          agents.map((a) => <AgentCard key={a.identity} agent={a} />)
        )}
      </section>
    </div>
  );
}
