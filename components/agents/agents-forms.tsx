"use client";

import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { createAgentAction, revokeTokenAction, rotateTokenAction } from "@/app/(console)/admin/agents/actions";
import {
  defaultRotationOverlap,
  defaultTokenLifetime,
  idleAgentsForm,
  rotationOverlaps,
  tokenLifetimes,
  type AgentsFormState,
  type ShownOnceToken,
} from "@/lib/adapters/console/agents/agents-form";
import { formatDateTime } from "@/lib/adapters/console/shared/format";
import { MessageAnswer, useServerActionForm } from "@/components/server-action-form";

const lostAnswer: AgentsFormState = {
  status: "error",
  message:
    "The server's answer was lost. The page was reloaded: check the list for what happened before trying again (a token made meanwhile cannot be shown again; rotate or revoke it).",
};

function useAgentsForm(action: (previous: AgentsFormState, formData: FormData) => Promise<AgentsFormState>) {
  const form = useServerActionForm(action, idleAgentsForm, { lostAnswer });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    form.submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  };
  return { ...form, onSubmit };
}

/**
 * A token's secret, the one time it is shown: selectable text and a copy
 * button. Where the clipboard is refused (an insecure origin, a denied
 * permission) the text is selected so the person can copy it themselves.
 */
function ShownOnce({ token }: { token: ShownOnceToken }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<"no" | "yes" | "refused">("no");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token.secret);
      setCopied("yes");
    } catch {
      input.current?.select();
      setCopied("refused");
    }
  };
  return (
    <div className="token-once" data-token-id={token.id}>
      <label htmlFor={id}>Token for {token.identity} (shown once)</label>
      <div className="token-once__row">
        <input
          id={id}
          ref={input}
          type="text"
          readOnly
          value={token.secret}
          className="mono"
          data-testid="token-secret"
          spellCheck={false}
          autoComplete="off"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" className="button button--small" onClick={() => void copy()}>
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="hint" role="status">
        {copied === "yes" ? "Copied to the clipboard. " : null}
        {copied === "refused"
          ? "The browser refused the clipboard: the token is selected, copy it with Ctrl+C. "
          : null}
        Token id <code>{token.id}</code>;{" "}
        {token.expiresAt ? `expires ${formatDateTime(new Date(token.expiresAt))}` : "does not expire"}. After you leave
        or reload this page it cannot be shown again.
      </p>
    </div>
  );
}

export function AgentsAnswer({ state }: { state: AgentsFormState }) {
  return (
    <MessageAnswer
      state={state}
      shownOnce={state.status === "done" && state.token ? <ShownOnce token={state.token} /> : null}
    />
  );
}

function ScopeChoices({
  legend,
  hint,
  prefix,
  names,
  allName,
  allLabel,
  defaultChecked,
}: {
  legend: string;
  hint: string;
  prefix: string;
  names: readonly string[];
  allName: string;
  allLabel: string;
  defaultChecked: boolean;
}) {
  const [all, setAll] = useState(false);
  const hintId = useId();
  return (
    <fieldset className="scope-choices" aria-describedby={hintId}>
      <legend>{legend}</legend>
      <p className="hint" id={hintId}>
        {hint}
      </p>
      <ul className="scope-choices__list">
        {names.map((name) => (
          <li key={name}>
            <label>
              <input type="checkbox" name={`${prefix}${name}`} defaultChecked={defaultChecked} disabled={all} />{" "}
              <code>{name}</code>
            </label>
          </li>
        ))}
        <li>
          <label>
            <input type="checkbox" name={allName} checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />{" "}
            {allLabel}
          </label>
        </li>
      </ul>
    </fieldset>
  );
}

export function CreateAgentForm({ workflows, tools }: { workflows: readonly string[]; tools: readonly string[] }) {
  const { state, pending, onSubmit } = useAgentsForm(createAgentAction);
  return (
    <form onSubmit={onSubmit} aria-label="Create an agent" className="agent-form">
      <AgentsAnswer state={state} />
      <div className="field agent-form__name">
        <label htmlFor="agent-name">Name</label>
        <input
          id="agent-name"
          name="name"
          type="text"
          required
          maxLength={64}
          pattern="[a-z0-9][a-z0-9._\-]*"
          autoComplete="off"
          spellCheck={false}
          aria-describedby="agent-name-hint"
        />
        <p className="hint" id="agent-name-hint">
          Lower-case letters, digits, <code>.</code> <code>_</code> <code>-</code>. Its identity becomes{" "}
          <code>spiffe://verity.local/agent/&lt;name&gt;</code>.
        </p>
      </div>
      <div className="agent-form__scopes">
        <ScopeChoices
          legend="Workflows it may create and drive"
          hint="Tasks of other workflows are refused (403)."
          prefix="workflow:"
          names={workflows}
          allName="allWorkflows"
          allLabel="Every workflow, including ones added later"
          defaultChecked={false}
        />
        <ScopeChoices
          legend="Tools it may call"
          hint="None ticked: it drives tasks but records no tool call."
          prefix="tool:"
          names={tools}
          allName="allTools"
          allLabel="Every tool, including ones added later"
          defaultChecked={false}
        />
      </div>
      <div className="agent-form__row">
        <label className="agent-form__check">
          <input type="checkbox" name="takeOver" /> May take over another agent&apos;s live lease
        </label>
        <label className="agent-form__check">
          <input type="checkbox" name="publishWorkflows" /> May publish workflow definitions
        </label>
        <label className="agent-form__check">
          <input type="checkbox" name="publishTools" /> May register tools
        </label>
        <label className="agent-form__check">
          <input type="checkbox" name="readRestricted" aria-describedby="agent-read-restricted-hint" /> May read
          restricted fields unmasked
        </label>
        <p className="hint" id="agent-read-restricted-hint">
          For a worker that must re-send a held call&apos;s exact request. Granted only by a person who may read them
          (data:restricted).
        </p>
        <div className="field">
          <label htmlFor="agent-expires">Token expires after</label>
          <select id="agent-expires" name="expiresIn" defaultValue={defaultTokenLifetime}>
            {tokenLifetimes.map((l) => (
              <option key={l.value} value={l.value}>
                {l.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Creating…" : "Create agent"}
        </button>
      </div>
    </form>
  );
}

/**
 * A token's controls: rotate with an overlap, revoke after a confirmation.
 * Its answer stays when the token stops being live (a revoke's, a
 * rotation's new token): the component is keyed by the token alone.
 */
export function TokenControls({ tokenId, prefix, live }: { tokenId: string; prefix: string; live: boolean }) {
  const rotate = useAgentsForm(rotateTokenAction);
  const revoke = useAgentsForm(revokeTokenAction);
  const [confirming, setConfirming] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const revokeButton = useRef<HTMLButtonElement>(null);
  const wasConfirming = useRef(false);
  // Keyboard focus follows the question: onto it when asked, back to Revoke… when it closes.
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
    else if (wasConfirming.current) revokeButton.current?.focus();
    wasConfirming.current = confirming;
  }, [confirming]);
  const state = revoke.state.status !== "idle" ? revoke.state : rotate.state;
  return (
    <div className="token-controls">
      <AgentsAnswer state={state} />
      {live ? (
        <div className="token-controls__row">
          <form onSubmit={rotate.onSubmit} aria-label={`Rotate token ${prefix}`} className="token-controls__rotate">
            <input type="hidden" name="tokenId" value={tokenId} />
            <label htmlFor={`overlap-${tokenId}`}>Old token keeps working for</label>
            <select id={`overlap-${tokenId}`} name="overlap" defaultValue={defaultRotationOverlap}>
              {rotationOverlaps.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
            <button type="submit" className="button button--small" disabled={rotate.pending}>
              {rotate.pending ? "Rotating…" : "Rotate"}
            </button>
          </form>
          {confirming ? (
            <form
              onSubmit={(e) => {
                revoke.onSubmit(e);
                setConfirming(false);
              }}
              aria-label={`Revoke token ${prefix}`}
              className="token-controls__confirm"
            >
              <input type="hidden" name="tokenId" value={tokenId} />
              <p>
                Revoke <code>{prefix}…</code>? The agent&apos;s next request with it is refused; this cannot be undone.
              </p>
              <div className="button-row">
                <button
                  ref={confirmButton}
                  type="submit"
                  className="button button--small button--danger"
                  disabled={revoke.pending}
                >
                  Revoke token
                </button>
                <button type="button" className="button button--small" onClick={() => setConfirming(false)}>
                  Keep it
                </button>
              </div>
            </form>
          ) : (
            <button
              ref={revokeButton}
              type="button"
              className="button button--small button--danger"
              disabled={revoke.pending}
              onClick={() => setConfirming(true)}
            >
              {revoke.pending ? "Revoking…" : "Revoke…"}
            </button>
          )}
        </div>
      ) : null}
    </div>
  );
}
