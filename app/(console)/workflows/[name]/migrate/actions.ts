"use server";

import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { getDb } from "@/lib/db/client";
import { applyMigrationSpec, planMigrationSpec } from "@/lib/adapters/console/workflows/migration-actions";
import type { MigrationApplyFormState, MigrationPlanFormState } from "@/lib/adapters/console/workflows/migration-form";

/** The dry run: writes nothing, but lists a version's running tasks, so it needs workflows:migrate too. */
export const planMigrationAction: FormAction<MigrationPlanFormState> = sessionFormAction(planMigrationSpec(getDb));

/** Applies a plan, task by task, each at the version the plan saw it at. */
export const applyMigrationAction: FormAction<MigrationApplyFormState> = sessionFormAction(applyMigrationSpec(getDb));
