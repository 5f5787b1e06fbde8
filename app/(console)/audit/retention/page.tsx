import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { getEnv } from "@/lib/config/env";
import { loadRetentionOverview } from "@/lib/adapters/console/retention/retention";
import { getRetentionPolicy } from "@/lib/stores/retention-policies";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { RetentionView } from "@/components/retention/retention-view";

export const metadata: Metadata = { title: "Audit retention" };

export default async function AuditRetentionPage() {
  const access = await authorizePage("audit:retention", "/audit/retention");
  if (!access.ok) {
    return (
      <ForbiddenNotice
        reason={`${access.reason} Retention deletes audit history and finished tasks' data, and legal holds decide what must be kept, so only administrators manage them.`}
      />
    );
  }
  const env = getEnv();
  const db = await consoleDb();
  const policy = {
    olderThanDays: env.VERITY_AUDIT_RETENTION_DAYS ?? null,
    taskOlderThanDays: env.VERITY_TASK_RETENTION_DAYS ?? null,
    everyMs: env.VERITY_AUDIT_RETENTION_INTERVAL_MS,
    loopOff: env.VERITY_RECONCILE_INTERVAL_MS <= 0,
    tenantPolicy: await getRetentionPolicy(db),
  };
  return <RetentionView policy={policy} overview={await loadRetentionOverview(db)} />;
}
