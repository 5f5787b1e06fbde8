/**
 * What the annotation form's server action answers (no server imports,
 * shared with the form): what happened, or what was wrong and with which
 * field, in words.
 */
export type AnnotationFormState =
  | { status: "idle" }
  | { status: "done"; message: string; annotationId: string }
  | { status: "error"; message: string; fields: Record<string, string> };

export const idleAnnotationForm: AnnotationFormState = { status: "idle" };
