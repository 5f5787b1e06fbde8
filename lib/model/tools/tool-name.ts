import { z } from "zod";

/**
 * The alphabet of tool names in agent token scopes: `payments.refund`. On
 * its own, away from the definition validator, so that the console's
 * client code can check a name without bundling Ajv, whose compiled
 * validators are code the console's CSP (no eval) refuses to run.
 */
export const ToolNameSchema = z
  .string()
  .max(64, "At most 64 characters.")
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Lower-case letters, digits, . _ - only, starting with a letter or digit.");
