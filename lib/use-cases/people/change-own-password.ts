import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { hashPassword, verifyPassword } from "@/lib/core/passwords";
import { passwordScryptN } from "@/lib/config/env";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { usernameThrottle, usernameThrottleKey } from "@/lib/model/auth/sign-in-throttle";
import { PasswordChangeSchema, passwordChangeProblems, type PasswordChange } from "@/lib/model/people/password-change";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { endUserConsoleSessions } from "@/lib/stores/console-sessions";
import { forgiveSignInAttempt, reserveSignInAttempt } from "@/lib/stores/sign-in-throttles";
import { getPerson, readPasswordHash, setUserPassword, type PersonRow } from "@/lib/stores/users";

const throttledFailureAudit = "password_change";

/**
 * A signed-in person replaces their password (a one-time one included).
 * The current password is checked like a sign-in: counted first against the
 * username's sign-in throttle (a stolen session cannot guess the password
 * any faster than the sign-in page can, and the two share one count), not
 * checked at all while it is blocked, forgiven when right. Then, in one
 * transaction: the new hash (guarded on the old one), a new session_version,
 * every other session of the person ended (`sessionId`, where they changed
 * it, stays), and `user.password_changed` in the audit log (never a
 * password). Every refusal changes nothing and names the field.
 */
export async function changeOwnPassword(
  db: Db,
  input: { userId: string; sessionId: string; change: PasswordChange },
  actor: AuditActor,
  now = new Date(),
): Promise<{ person: PersonRow; sessionsEnded: number }> {
  const change = parseOrThrow(PasswordChangeSchema, input.change);
  const person = await getPerson(db, { id: input.userId });
  if (!person || person.disabledAt) throw new AppError("unauthenticated", "Your account is not active: sign in again.");
  if (!person.hasPassword)
    throw new AppError(
      "forbidden",
      "You sign in through single sign-on: Verity holds no password of yours. Change it at your identity provider.",
    );
  const problems = passwordChangeProblems(change, person.username);
  if (problems.length > 0)
    throw new AppError("validation_failed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });

  const userKey = { key: usernameThrottleKey(person.username), rule: usernameThrottle };
  const reservation = await reserveSignInAttempt(db, [userKey], now);
  if (!reservation.allowed)
    throw new AppError(
      "forbidden",
      `current_password: too many wrong passwords for ${person.username}; try again after ${reservation.retryAt.toISOString()}.`,
      {
        errors: [{ field: "current_password", message: "Too many wrong passwords: wait and try again." }],
        retry_at: reservation.retryAt.toISOString(),
      },
    );
  const previousHash = await readPasswordHash(db, person.id);
  if (!previousHash || !(await verifyPassword(change.current_password, previousHash))) {
    for (const block of reservation.blocked)
      await appendAuditEntry(db, {
        action: "auth.sign_in_throttled",
        actor,
        subject: { type: "user", id: person.username },
        details: {
          scope: "username",
          username: person.username,
          failures: block.failures,
          blocked_until: block.blockedUntil.toISOString(),
          method: throttledFailureAudit,
        },
      });
    throw new AppError("validation_failed", "current_password: Is not your current password.", {
      errors: [{ field: "current_password", message: "Is not your current password." }],
    });
  }
  await forgiveSignInAttempt(db, { clear: [userKey.key], forgive: [] }, now);

  // Hashed before the transaction: scrypt takes most of a second, the transaction only the write.
  const passwordHash = await hashPassword(change.new_password, passwordScryptN());
  return db.$transaction(async (tx) => {
    const after = await setUserPassword(tx, person.id, { previousHash, passwordHash, mustChange: false });
    if (!after)
      throw new AppError(
        "version_conflict",
        "Your password was changed meanwhile (in another browser, or reset by an admin); nothing was changed. Sign in again.",
      );
    const sessionsEnded = await endUserConsoleSessions(tx, person.id, "password_changed", now, input.sessionId);
    await appendAuditEntry(
      tx,
      personAuditEntry("user.password_changed", after, actor, {
        sessions_ended: sessionsEnded,
        session_kept: input.sessionId,
        one_time_replaced: person.passwordMustChange,
      }),
    );
    return { person: after, sessionsEnded };
  });
}
