"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AuditRowView } from "@/lib/adapters/console/audit/audit-format";
import { formatDateTime } from "@/lib/adapters/console/shared/format";
import { AnnotationForm } from "@/components/audit/annotation-form";
import { TaskHistoryTimeline } from "@/components/audit/task-history-timeline";

/**
 * A task's events and, for people who may correct the record
 * (audit:annotate), the correction form: a row's Annotate button picks its
 * entry, and an annotation added is loaded into the history at once.
 */
export function TaskHistoryWithAnnotations({
  taskId,
  queryString,
  orderLabel,
  canAnnotate,
  role,
}: {
  taskId: string;
  queryString: string;
  orderLabel: string;
  canAnnotate: boolean;
  role: string;
}) {
  const queryClient = useQueryClient();
  const [entryId, setEntryId] = useState("");
  const [described, setDescribed] = useState<string | null>(null);
  const pick = (row: AuditRowView) => {
    setEntryId(row.id);
    setDescribed(`${row.title} — ${row.stream} #${row.seq}, ${formatDateTime(new Date(row.at))}`);
    const form = document.getElementById("annotate-heading");
    form?.scrollIntoView({ block: "start" });
    document.querySelector<HTMLTextAreaElement>(".annotation-form textarea")?.focus();
  };
  return (
    <>
      <section className="card audit-history" aria-labelledby="history-heading">
        <h2 id="history-heading">Events</h2>
        <TaskHistoryTimeline
          key={queryString}
          taskId={taskId}
          queryString={queryString}
          orderLabel={orderLabel}
          onAnnotate={canAnnotate ? pick : undefined}
        />
      </section>
      <section className="card" aria-labelledby="annotate-heading">
        <h2 id="annotate-heading">Correct the record</h2>
        {canAnnotate ? (
          <AnnotationForm
            entryId={entryId}
            onEntryIdChange={(value) => {
              setEntryId(value);
              setDescribed(null);
            }}
            taskId={taskId}
            describedEntry={described}
            onDone={() => void queryClient.invalidateQueries({ queryKey: ["task-history", taskId] })}
          />
        ) : (
          <p className="subtle">
            Correction annotations are added by operators, auditors and admins (the audit:annotate permission); your
            role ({role}) reads the history without it.
          </p>
        )}
      </section>
    </>
  );
}
