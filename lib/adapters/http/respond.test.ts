import { describe, expect, it } from "vitest";
import { routeTemplate } from "@/lib/adapters/http/respond";

/** Spans and the request histogram are named by the route's template: ids never become span names or label values. */
describe("routeTemplate", () => {
  it("puts each param's name back where its value stands", () => {
    expect(routeTemplate("/api/v1/tasks/task_9/transitions", { id: "task_9" })).toBe("/api/v1/tasks/{id}/transitions");
    expect(routeTemplate("/api/v1/tools/crm.add%20note/versions/2", { name: "crm.add note", version: "2" })).toBe(
      "/api/v1/tools/{name}/versions/{version}",
    );
    expect(routeTemplate("/api/v1/tasks", {})).toBe("/api/v1/tasks");
  });

  it("folds a catch-all's segments into one, so unknown paths are one series", () => {
    expect(routeTemplate("/api/v1/no/such/thing", { path: ["no", "such", "thing"] })).toBe("/api/v1/{path}");
  });
});
