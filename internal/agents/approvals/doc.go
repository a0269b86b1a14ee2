// Package approvals holds actions the policy gate did not allow for a person to decide: the gated entry point
// creates an approval in its own transaction instead of acting, a member who manages campaigns approves or
// denies it, and approving runs the action through the Executor registered for its action type (and, where one
// type holds several kinds of request, its operation: campaign.launch holds run launches and lead adds).
//
// Invariants:
//   - An approval is created in the transaction of the request it holds, with the approval.requested event, the
//     notifications of the members who may decide and the job that expires it, so all or none of them exist.
//     Nothing of the action itself is done when it is held.
//   - It expires ExpiresAfter (30 minutes) after creation. Deciding is one conditional update (pending and not
//     expired at now), so of a decision, a second decision and the expiry exactly one wins; an expired one
//     answers 409 approval_expired and is marked expired, a decided one 409 approval_already_decided.
//   - Approving acts exactly once, in the decision's transaction: the executor re-runs every hard gate
//     (suppressions, limits, holds, domain health) with the requester's scope, never the approver's. When a
//     hard gate refuses, the approval stays approved with result {error: {code, message}} and nothing is done;
//     otherwise it is executed with the executor's result. Human-approved actions never count against a policy.
//   - Every decision (approve, deny, expire, withdraw) raises approval.decided; approve and deny are audited.
//     The action type's Hook (OnDecided) hears approvals, denials and expiries in the deciding transaction,
//     so a run moves with its approval; a withdrawal comes from the action's owner (a cancelled run) and is
//     not echoed back to it.
//   - Expiry needs no sweep across organizations: each approval's ExpireArgs job is scheduled at its
//     expires_at when it is created, and reads show a pending approval past its time as expired before the
//     job runs.
package approvals
