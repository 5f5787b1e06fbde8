import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";

const verdictText: Record<ProviderVerdict, { word: string; tone: string; title: string }> = {
  FOUND: {
    word: "Provider: found",
    tone: "success",
    title: "The provider has an effect under this key: the call happened. Accept its evidence; nothing is sent.",
  },
  NOT_FOUND: {
    word: "Provider: not found",
    tone: "warning",
    title: "The provider has nothing under this key: approving sends it, once, under the same key.",
  },
  UNKNOWN: { word: "Provider: can't say", tone: "neutral", title: "The provider could not say whether it happened." },
};

/** What the provider said of a frozen call's key, in a row of the queue or the inbox; the review page says it in full. */
export function VerdictBadge({ verdict }: { verdict: ProviderVerdict | null | undefined }) {
  if (!verdict) return null;
  const text = verdictText[verdict];
  return (
    <span className={`badge badge--${text.tone} verdict-badge`} title={text.title} data-testid="provider-verdict">
      {text.word}
    </span>
  );
}
